#!/usr/bin/env bash
# Compares two builds of agentlog on the same inputs in one run: unified JSONL, Parquet,
# usage and Markdown transcripts, on 1 and 2 threads, rounds interleaved (before, after,
# before, …), best of RUNS (default 3). Prints a Markdown table of wall times, the ratio
# after / before, and output sizes; says which outputs differ between the builds.
#
# usage: benches/compare.sh BEFORE_BINARY AFTER_BINARY INPUT_DIR…
#        RUNS=5 ONLY='parquet' benches/compare.sh …
set -euo pipefail
BEFORE=$1 AFTER=$2
shift 2
RUNS=${RUNS:-3}
OUT=${OUT:-target/bench/compare}
rm -rf "$OUT" && mkdir -p "$OUT"

# label, then the arguments after the binary; OUTPUT is replaced by a path per build, and
# standard output goes to OUTPUT.stdout.
JOBS=(
  "unified|convert INPUT --to unified -o OUTPUT.jsonl"
  "parquet|convert INPUT --to parquet -o OUTPUT.parquet"
  "usage|usage INPUT --by session --json"
  "markdown|convert INPUT --to markdown -o OUTPUT.md/"
)

best() { sort -n | head -1; }

echo "| input | job | threads | before (s) | after (s) | after / before | before bytes | after bytes | same output |"
echo "|---|---|---|---|---|---|---|---|---|"
for input in "$@"; do
  name=$(basename "$input")
  for job in "${JOBS[@]}"; do
    label=${job%%|*}
    args=${job#*|}
    [[ -n "${ONLY:-}" && ! "$label" =~ $ONLY ]] && continue
    for threads in 1 2; do
      declare -A times=()
      for round in $(seq "$RUNS"); do
        for build in before after; do
          bin=$BEFORE
          [ "$build" = after ] && bin=$AFTER
          out="$OUT/$name-$label-$threads-$build"
          rm -rf "$out".*
          cmd=${args//INPUT/$input}
          cmd=${cmd//OUTPUT/$out}
          start=$(date +%s.%N)
          # shellcheck disable=SC2086
          "$bin" $cmd --jobs "$threads" -q >"$out.stdout" 2>/dev/null || true
          end=$(date +%s.%N)
          times[$build]+="$(echo "$end - $start" | bc) "
        done
      done
      b=$(tr ' ' '\n' <<<"${times[before]}" | grep . | best)
      a=$(tr ' ' '\n' <<<"${times[after]}" | grep . | best)
      bb=$(du -sb "$OUT/$name-$label-$threads-before".* | awk '{s+=$1} END {print s}')
      ab=$(du -sb "$OUT/$name-$label-$threads-after".* | awk '{s+=$1} END {print s}')
      # Each output (a file, a directory, standard output) against the same of the other build.
      same=yes
      for before in "$OUT/$name-$label-$threads-before".*; do
        diff -rq "$before" "${before/-before./-after.}" >/dev/null 2>&1 || same=no
      done
      # Outputs of large inputs are large: only one row's are kept at a time.
      rm -rf "$OUT/$name-$label-$threads"-*
      printf '| %s | %s | %s | %.3f | %.3f | %.3f | %s | %s | %s |\n' "$name" "$label" "$threads" "$b" "$a" \
        "$(echo "$a / $b" | bc -l)" "$bb" "$ab" "$same"
      unset times
    done
  done
done
