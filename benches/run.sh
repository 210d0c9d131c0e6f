#!/usr/bin/env bash
# Measures agentlog against its limits and against what users would use instead, on one
# generated corpus, in one run, and prints a Markdown table.
#
# usage: benches/run.sh [BYTES] [SEED]        (default 1 GiB, seed 42)
#        ONLY='usage' benches/run.sh           only the rows whose label matches the regex
#
# Rows: reading the files (cat), parsing every line into serde_json::Value (the parse limit),
# agentlog to unified JSONL, Parquet, the Python package's agentlog.read into a pyarrow table, interchange, ATIF, OpenTelemetry, Markdown and HTML, Claude Code and Codex session files, and DuckDB's JSON-to-Parquet COPY on the
# same files; HTML transcripts of the Claude Code sessions, a file per session, and claude-code-log
# doing the same; agentlog usage and ccusage daily; each with wall time (best of RUNS interleaved rounds, default 3), MB/s of input,
# the CPU time of that run and peak RSS (/usr/bin/time, the highest of the runs). Ratios compare
# agentlog with the parse baseline and with DuckDB on the same number of threads. A last row
# converts one file of at least 500 MB; others convert a replica of the real corpus (the shared
# corpus copied 20 times with new ids) to unified JSONL and Parquet, beside DuckDB. Needs python3 and npm; installs duckdb and claude-code-log
# from PyPI, and ccusage from npm, if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
BYTES=${1:-1073741824}
SEED=${2:-42}
CORPUS=target/bench/corpus-$BYTES-$SEED
OUT=target/bench/out
mkdir -p target/bench "$OUT"

cargo build --release --quiet --bin agentlog --example bench_corpus --example parse_baseline
[ -d "$CORPUS" ] || ./target/release/examples/bench_corpus "$CORPUS" "$BYTES" "$SEED"
python3 -c "import duckdb" 2>/dev/null || python3 -m pip install --quiet 'duckdb>=1.1'
command -v claude-code-log >/dev/null || python3 -m pip install --quiet 'claude-code-log>=1.7,<2'
CCUSAGE=target/bench/ccusage/node_modules/.bin/ccusage
[ -x "$CCUSAGE" ] || npm install --silent --no-fund --no-audit --prefix target/bench/ccusage ccusage@20.0.24 >/dev/null
mkdir -p target/bench/empty-home
# The Python package's wheel, in an environment of its own.
PYBENCH=target/bench/python
if [ -z "${ONLY:-}" ] || [[ "Python agentlog.read" =~ $ONLY ]]; then
  python3 -m pip install --quiet 'maturin>=1.9,<2'
  rm -rf target/bench/wheels && maturin build --quiet --release -m python/Cargo.toml -o target/bench/wheels
  [ -x "$PYBENCH/bin/python" ] || python3 -m venv "$PYBENCH"
  "$PYBENCH/bin/python" -m pip install --quiet --force-reinstall target/bench/wheels/agentlog-*.whl
fi
SIZE=$(find "$CORPUS" -type f -name '*.jsonl' -printf '%s\n' | awk '{s+=$1} END {print s}')
CLAUDE_SIZE=$(find "$CORPUS/claude" -type f -name '*.jsonl' -printf '%s\n' | awk '{s+=$1} END {print s}')
FILES=$(find "$CORPUS" -type f -name '*.jsonl' | wc -l)
LINES=$(find "$CORPUS" -type f -name '*.jsonl' -exec cat {} + | grep -c .)

# One big file (>= 500 MB) made of the corpus's largest files, for the single-file memory row.
BIG=target/bench/single-$BYTES-$SEED.jsonl
if [ ! -f "$BIG" ]; then
  : > "$BIG"
  for f in $(find "$CORPUS/claude" -type f -printf '%s %p\n' | sort -rn | awk '{print $2}'); do
    cat "$f" >> "$BIG"
    [ "$(stat -c %s "$BIG")" -ge 524288000 ] && break
  done
fi
BIGSIZE=$(stat -c %s "$BIG")

# The shared corpus copied 20 times with new ids (bench_corpus xN), when it is present.
REPLICA=target/bench/replica-x20-$SEED
if [ -d ../shared/corpus ] && [ ! -d "$REPLICA" ]; then
  ./target/release/examples/bench_corpus "$REPLICA" x20 "$SEED"
fi
REPLICA_SIZE=$(find "$REPLICA" -type f -printf '%s\n' 2>/dev/null | awk '{s+=$1} END {print s+0}')

TIMES=$(mktemp)
ROWS=()
declare -A LABEL THREADS BYTES CMD BEST CPU RSS MBS FAILED
# Declares a row: label, threads, input bytes, command.
row() {
  local key="$1/$2"
  # ONLY=REGEX measures only the rows whose label matches.
  if [ -n "${ONLY:-}" ] && ! [[ $1 =~ $ONLY ]]; then return; fi
  ROWS+=("$key")
  LABEL[$key]=$1 THREADS[$key]=$2 BYTES[$key]=$3
  shift 3
  CMD[$key]=$(printf '%q ' "$@")
}
# Runs a row's command once, keeping its fastest wall time (and that run's CPU time) and its
# highest peak RSS. A failed run fails the row, so an error never passes for a fast time.
run() {
  local key=$1 secs rss user sys
  rm -rf "${OUT:?}"/*
  sync
  local rc=0
  eval "/usr/bin/time -f '%e %M %U %S' -o '$TIMES' ${CMD[$key]}" >/dev/null 2>"$OUT.err" || rc=$?
  # agentlog exits with 1 when it reported input lines or files (the generated corpus holds
  # copies of files it warns about, such as a workflow journal where a session file goes).
  if [ "$rc" != 0 ] && ! { [ "$rc" = 1 ] && [[ ${CMD[$key]} == *target/release/agentlog* ]]; }; then
    FAILED[$key]="exit status $rc: $( (grep -v '^[[:space:]]*$' "$OUT.err" || true) | head -n 1 | cut -c1-60)"
    return
  fi
  read -r secs rss user sys < <(tail -n 1 "$TIMES")
  if [ -z "${BEST[$key]:-}" ] || awk -v a="$secs" -v b="${BEST[$key]}" 'BEGIN {exit !(a < b)}'; then
    BEST[$key]=$secs
    CPU[$key]=$(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.2f", u + s}')
  fi
  [ "$rss" -gt "${RSS[$key]:-0}" ] && RSS[$key]=$rss
  return 0
}
# Stolen CPU time so far (clock ticks, all CPUs): time the hypervisor ran something else.
steal() { awk '/^cpu / {print $9}' /proc/stat; }

cat "$(find "$CORPUS" -type f | head -1)" > /dev/null   # warm the page cache
find "$CORPUS" -type f -exec cat {} + > /dev/null

row "cat > /dev/null" 1 "$SIZE" sh -c "find '$CORPUS' -type f -exec cat {} + > /dev/null"
for t in 1 2; do
  row "parse into serde_json::Value" $t "$SIZE" ./target/release/examples/parse_baseline "$CORPUS" $t
  row "agentlog --to unified" $t "$SIZE" ./target/release/agentlog convert -q "$CORPUS" --jobs $t -o "$OUT/events.jsonl"
  row "agentlog --to unified --redact" $t "$SIZE" ./target/release/agentlog convert -q "$CORPUS" --jobs $t --redact -o "$OUT/redacted.jsonl"
  row "agentlog --to unified --redact --pseudonymize all" $t "$SIZE" ./target/release/agentlog convert -q "$CORPUS" --jobs $t --redact --pseudonymize all -o "$OUT/pseudonymized.jsonl"
  row "agentlog --to parquet" $t "$SIZE" ./target/release/agentlog convert -q "$CORPUS" --jobs $t -o "$OUT/events.parquet"
  # union_by_name=true would keep every file's columns, but DuckDB runs out of memory
  # (18.8 GiB) binding it on this corpus; without it the schema is inferred from a sample.
  # The row fails unless every input line becomes a row.
  row "DuckDB COPY read_json_auto to Parquet" $t "$SIZE" python3 -c "
import duckdb
c = duckdb.connect(); c.execute('SET threads=$t')
c.execute(\"COPY (SELECT * FROM read_json_auto('$CORPUS/**/*.jsonl', maximum_object_size=16777216, ignore_errors=true)) TO '$OUT/duckdb.parquet' (FORMAT parquet, COMPRESSION zstd)\")
rows = c.execute(\"SELECT count(*) FROM '$OUT/duckdb.parquet'\").fetchone()[0]
assert rows == $LINES, f'DuckDB wrote {rows} rows for $LINES lines'"
done
# The Python package, built with the same release profile, into a pyarrow table in memory.
for t in 1 2; do
  row "Python agentlog.read into a pyarrow table" $t "$SIZE" "$PYBENCH/bin/python" -c "
import agentlog
table = agentlog.read('$CORPUS', jobs=$t).read_all()
assert table.num_rows > 0"
  row "Python agentlog.read, batch by batch" $t "$SIZE" "$PYBENCH/bin/python" -c "
import agentlog
assert sum(batch.num_rows for batch in agentlog.read('$CORPUS', jobs=$t)) > 0"
done
row "agentlog --to interchange" 2 "$SIZE" ./target/release/agentlog convert -q "$CORPUS" --jobs 2 -o "$OUT/events.json"
row "agentlog --to atif" 2 "$SIZE" ./target/release/agentlog convert -q "$CORPUS" --jobs 2 --to atif -o "$OUT/trajectories.atif.jsonl"
row "agentlog --to otel" 2 "$SIZE" ./target/release/agentlog convert -q "$CORPUS" --jobs 2 --to otel -o "$OUT/traces.otlp.jsonl"
# The same traces sent as OTLP/HTTP protobuf to a receiver on loopback that keeps nothing.
exec {SINK}< <(python3 benches/otlp_sink.py)
SINK_PID=$!
trap 'kill $SINK_PID 2>/dev/null || true' EXIT
read -r SINK_PORT <&$SINK
row "agentlog --otlp-endpoint (loopback)" 2 "$SIZE" ./target/release/agentlog convert -q "$CORPUS" --jobs 2 --otlp-endpoint "http://127.0.0.1:$SINK_PORT/v1/traces"
row "agentlog --to markdown" 2 "$SIZE" ./target/release/agentlog convert -q "$CORPUS" --jobs 2 -o "$OUT/transcript.md"
row "agentlog --to html" 2 "$SIZE" ./target/release/agentlog convert -q "$CORPUS" --jobs 2 -o "$OUT/transcript.html"
row "agentlog --to claude-code -o DIR/" 2 "$SIZE" ./target/release/agentlog convert -q "$CORPUS" --jobs 2 --to claude-code -o "$OUT/claude-code/"
row "agentlog --to codex -o DIR/" 2 "$SIZE" ./target/release/agentlog convert -q "$CORPUS" --jobs 2 --to codex -o "$OUT/codex/"
# Transcripts of the Claude Code sessions, one file per session and an index, beside
# claude-code-log (which reads only Claude Code) doing the same on the same files.
for t in 1 2; do
  row "agentlog --to html -o DIR/, Claude Code" $t "$CLAUDE_SIZE" ./target/release/agentlog convert -q "$CORPUS/claude" --jobs $t --to html -o "$OUT/html/"
  row "claude-code-log to HTML, Claude Code" $t "$CLAUDE_SIZE" claude-code-log convert --projects-dir "$CORPUS/claude/projects" --all-projects --no-cache -j $t -o "$OUT/claude-code-log/"
done
# The real logs, replicated: large strings and images rather than many small events.
for t in 1 2; do
  [ -d "$REPLICA" ] || break
  row "agentlog --to unified, real-log replica" $t "$REPLICA_SIZE" ./target/release/agentlog convert -q "$REPLICA" --jobs $t -o "$OUT/replica.jsonl"
  row "agentlog --to parquet, real-log replica" $t "$REPLICA_SIZE" ./target/release/agentlog convert -q "$REPLICA" --jobs $t -o "$OUT/replica.parquet"
  row "DuckDB COPY read_json_auto to Parquet, real-log replica" $t "$REPLICA_SIZE" python3 -c "
import duckdb
c = duckdb.connect(); c.execute('SET threads=$t')
c.execute(\"COPY (SELECT * FROM read_json_auto('$REPLICA/**/*.jsonl', maximum_object_size=16777216, ignore_errors=true)) TO '$OUT/replica-duckdb.parquet' (FORMAT parquet, COMPRESSION zstd)\")"
done
# The report page, with and without the transcripts of the sessions it lists.
if [ -d "$REPLICA" ]; then
  row "agentlog report, real-log replica" 2 "$REPLICA_SIZE" ./target/release/agentlog report -q "$REPLICA" --jobs 2 -o "$OUT/report.html"
  row "agentlog report --no-transcripts, real-log replica" 2 "$REPLICA_SIZE" ./target/release/agentlog report -q "$REPLICA" --jobs 2 --no-transcripts -o "$OUT/report.html"
fi
row "agentlog --to parquet, one file" 2 "$BIGSIZE" ./target/release/agentlog convert -q "$BIG" -o "$OUT/single.parquet"
# Search: streaming over the real-log replica beside rg counting the same word in the raw files,
# for a word of a few sessions (rollback: 20 files, 4 MB) and one of many (migration: 260
# files, 148 MB, which search must parse); then an archive of the replica copied 50 times (over
# 1 GB of unified sessions), its index built again from scratch, and both searches through the
# index and through the files.
if [ -d "$REPLICA" ]; then
  REPLICA50=target/bench/replica-x50-$SEED ARCHIVE=target/bench/archive-x50-$SEED
  [ -d "$REPLICA50" ] || ./target/release/examples/bench_corpus "$REPLICA50" x50 "$SEED"
  ./target/release/agentlog archive -q "$ARCHIVE" "$REPLICA50" || [ $? -le 1 ]
  ARCHIVE_SIZE=$(find "$ARCHIVE" -type f -name '*.jsonl' -printf '%s\n' | awk '{s+=$1} END {print s+0}')
  row "agentlog archive --index, index built anew, archive x50" 2 "$ARCHIVE_SIZE" sh -c \
    "rm -f '$ARCHIVE/.agentlog-index.sqlite'; ./target/release/agentlog archive -q --index '$ARCHIVE' '$REPLICA50' || [ \$? -le 1 ]"
  for word in rollback migration; do
    row "agentlog search $word, real-log replica" 2 "$REPLICA_SIZE" sh -c "./target/release/agentlog search -q $word '$REPLICA' --jobs 2 --json >/dev/null"
    row "rg -c -i -w $word, real-log replica" 2 "$REPLICA_SIZE" sh -c "rg -c -i -w -j 2 $word '$REPLICA' >/dev/null"
    row "agentlog search $word, indexed archive x50" 2 "$ARCHIVE_SIZE" sh -c "./target/release/agentlog search -q $word '$ARCHIVE' --jobs 2 --json >/dev/null"
    row "agentlog search --no-index $word, archive x50" 2 "$ARCHIVE_SIZE" sh -c "./target/release/agentlog search -q --no-index $word '$ARCHIVE' --jobs 2 --json >/dev/null"
  done
fi
# Tokens and cost per day, both agents, beside ccusage doing the same on the same files; one
# thread is one core for both (taskset), since ccusage has no thread count of its own.
for t in 1 2; do
  cores=$([ $t = 1 ] && echo 0 || echo 0,1)
  row "agentlog usage --by day --json" $t "$SIZE" taskset -c $cores ./target/release/agentlog usage -q "$CORPUS" -j $t --by day --tz UTC --json
  row "agentlog drift --json" $t "$SIZE" taskset -c $cores ./target/release/agentlog drift -q "$CORPUS" -j $t --json
  row "ccusage daily --json (Claude Code and Codex)" $t "$SIZE" env HOME="$PWD/target/bench/empty-home" \
    CLAUDE_CONFIG_DIR="$PWD/$CORPUS/claude" CODEX_HOME="$PWD/$CORPUS/codex" taskset -c $cores "$CCUSAGE" daily --json --offline -z UTC
done

# Rounds go through every row in turn, so that each row's best run is drawn from the whole
# run's time rather than from one noisy minute.
STEAL0=$(steal) START=$(date +%s)
for _ in $(seq "${RUNS:-3}"); do
  for key in "${ROWS[@]}"; do
    [ -n "${FAILED[$key]:-}" ] || run "$key"
  done
done
STOLEN=$(awk -v t="$(( $(steal) - STEAL0 ))" -v s="$(( $(date +%s) - START ))" -v n="$(nproc)" \
  'BEGIN {printf "%.0f", 100 * t / 100 / (s * n)}')

echo "Corpus: $CORPUS, $FILES files, $((SIZE / 1000000)) MB; one file of $((BIGSIZE / 1000000)) MB."
echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)."
echo "Best of ${RUNS:-3} interleaved rounds; the hypervisor took ${STOLEN}% of the CPU time during the run (steal)."
echo
echo "| what | threads | seconds | MB/s | CPU s | peak RSS MB |"
echo "|---|---|---|---|---|---|"
for key in "${ROWS[@]}"; do
  if [ -n "${FAILED[$key]:-}" ]; then
    MBS[$key]=0
    printf '| %s | %s | failed: %s | | | |\n' "${LABEL[$key]}" "${THREADS[$key]}" "${FAILED[$key]}"
    continue
  fi
  MBS[$key]=$(awk -v b="${BYTES[$key]}" -v s="${BEST[$key]}" 'BEGIN {printf "%.1f", b / 1e6 / s}')
  printf '| %s | %s | %.2f | %s | %s | %d |\n' "${LABEL[$key]}" "${THREADS[$key]}" "${BEST[$key]}" "${MBS[$key]}" \
    "${CPU[$key]}" $((RSS[$key] / 1024))
done
echo
ratio() {
  if [ -z "${MBS[$1]:-}" ] || [ -z "${MBS[$2]:-}" ] || [ "${MBS[$2]}" = 0 ]; then echo -; return; fi
  awk -v a="${MBS[$1]}" -v b="${MBS[$2]}" 'BEGIN {printf "%.2f", a / b}'
}
echo "| ratio | 1 thread | 2 threads |"
echo "|---|---|---|"
echo "| unified / parse baseline | $(ratio 'agentlog --to unified/1' 'parse into serde_json::Value/1') | $(ratio 'agentlog --to unified/2' 'parse into serde_json::Value/2') |"
echo "| parquet / DuckDB | $(ratio 'agentlog --to parquet/1' 'DuckDB COPY read_json_auto to Parquet/1') | $(ratio 'agentlog --to parquet/2' 'DuckDB COPY read_json_auto to Parquet/2') |"
echo "| 2 threads / 1 thread, unified | | $(ratio 'agentlog --to unified/2' 'agentlog --to unified/1') |"
echo "| 2 threads / 1 thread, parquet | | $(ratio 'agentlog --to parquet/2' 'agentlog --to parquet/1') |"
echo "| usage / ccusage daily | $(ratio 'agentlog usage --by day --json/1' 'ccusage daily --json (Claude Code and Codex)/1') | $(ratio 'agentlog usage --by day --json/2' 'ccusage daily --json (Claude Code and Codex)/2') |"
for word in rollback migration; do
  echo "| search / rg -c -i -w, $word, replica | | $(ratio "agentlog search $word, real-log replica/2" "rg -c -i -w $word, real-log replica/2") |"
  echo "| indexed search / search of the files, $word, archive x50 | | $(ratio "agentlog search $word, indexed archive x50/2" "agentlog search --no-index $word, archive x50/2") |"
done
echo "| html -o DIR/ / claude-code-log | $(ratio 'agentlog --to html -o DIR/, Claude Code/1' 'claude-code-log to HTML, Claude Code/1') | $(ratio 'agentlog --to html -o DIR/, Claude Code/2' 'claude-code-log to HTML, Claude Code/2') |"
rm -f "$TIMES"
