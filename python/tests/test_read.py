"""`agentlog.read`, `sessions` and `events` give what the command writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import agentlog
from conftest import run_cli


def plain(table: pa.Table) -> pa.Table:
    """The table with its JSON extension columns (as pyarrow reads Parquet's JSON type) as the
    strings they hold."""
    columns, fields = [], []
    for field, column in zip(table.schema, table.columns):
        if isinstance(field.type, pa.BaseExtensionType):
            column = pa.chunked_array([c.storage for c in column.chunks], type=field.type.storage_type)
            field = field.with_type(field.type.storage_type)
        columns.append(column)
        fields.append(field)
    return pa.Table.from_arrays(columns, schema=pa.schema(fields, metadata=table.schema.metadata))


def cli_parquet(inputs: Path, tmp_path: Path) -> tuple[pa.Table, pa.Table]:
    out = tmp_path / "cli.parquet"
    done = run_cli("convert", "-q", str(inputs), "-o", str(out))
    assert done.returncode in (0, 1), done.stderr.decode()
    return plain(pq.read_table(out)), plain(pq.read_table(tmp_path / "cli.sessions.parquet"))


def checksum(table: pa.Table) -> tuple:
    usage = pc.struct_field(table.column("usage"), "output_tokens")
    return (
        pc.sum(usage).as_py(),
        pc.sum(table.column("source_line")).as_py(),
        pc.sum(pc.utf8_length(table.column("text").fill_null(""))).as_py(),
    )


def test_read_gives_the_rows_ids_and_values_of_the_cli_parquet(shared_corpus: Path, tmp_path: Path) -> None:
    expected, _ = cli_parquet(shared_corpus, tmp_path)
    reader = agentlog.read(shared_corpus)
    assert isinstance(reader, pa.RecordBatchReader)
    got = reader.read_all()
    assert got.num_rows == expected.num_rows > 10_000
    assert got.column("id").to_pylist() == expected.column("id").to_pylist()
    assert checksum(got) == checksum(expected)
    assert got.schema.equals(expected.schema, check_metadata=True)
    assert got.equals(expected)


def test_sessions_gives_the_cli_sessions_table(shared_corpus: Path, tmp_path: Path) -> None:
    _, expected = cli_parquet(shared_corpus, tmp_path)
    got = agentlog.sessions(shared_corpus).read_all()
    assert got.num_rows == expected.num_rows > 50
    assert got.equals(expected)


def test_events_gives_the_unified_lines_as_dicts(shared_corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli.jsonl"
    assert run_cli("convert", "-q", str(shared_corpus), "-o", str(out)).returncode in (0, 1)
    with open(out, encoding="utf-8") as f:
        expected = [json.loads(line) for line in f]
    got = list(agentlog.events(shared_corpus))
    assert len(got) == len(expected) > 10_000
    assert got == expected


def test_filters_mean_what_the_flags_mean(shared_corpus: Path) -> None:
    every = agentlog.read(shared_corpus).read_all()
    codex = agentlog.read(shared_corpus, agent="codex").read_all()
    assert 0 < codex.num_rows < every.num_rows
    assert set(codex.column("agent").to_pylist()) == {"codex"}
    one = every.column("session_id")[0].as_py()
    only = agentlog.read(shared_corpus, session=one).read_all()
    assert set(only.column("session_id").to_pylist()) == {one}
    assert only.num_rows == pc.sum(pc.equal(every.column("session_id"), one)).as_py()


def test_data_frame_libraries_take_the_reader(shared_corpus: Path) -> None:
    polars = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    rows = agentlog.read(shared_corpus).read_all().num_rows
    frame = polars.from_arrow(agentlog.read(shared_corpus))
    assert frame.height == rows
    relation = duckdb.from_arrow(agentlog.read(shared_corpus))
    assert relation.aggregate("count(*)").fetchall()[0][0] == rows
    pandas = agentlog.read(shared_corpus).read_pandas()
    assert len(pandas) == rows


def test_default_places_are_the_agents_homes(samples: Path, tmp_path: Path) -> None:
    env = dict(
        os.environ,
        HOME=str(tmp_path),
        CLAUDE_CONFIG_DIR=str(samples / "claude" / "home"),
        CODEX_HOME=str(samples / "codex" / "home"),
    )
    script = "import agentlog, warnings; warnings.simplefilter('ignore'); print(agentlog.read().read_all().num_rows)"
    rows = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, check=True)
    out = tmp_path / "cli.parquet"
    run_cli("convert", "-q", "-o", str(out), env=env)
    assert int(rows.stdout) == pq.read_metadata(out).num_rows > 0


def test_the_interpreter_runs_while_rust_converts(shared_corpus: Path, tmp_path: Path) -> None:
    done = []
    worker = threading.Thread(target=lambda: done.append(agentlog.convert(shared_corpus, tmp_path / "out.parquet")))
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
    worker.join()
    assert done and done[0]["totals"]["events"] > 10_000
    # Holding the interpreter's lock while Rust converts would stop this loop for the whole run.
    longest_pause = max(b - a for a, b in zip(ticks, ticks[1:]))
    assert longest_pause < (ticks[-1] - ticks[0]) / 4, (longest_pause, ticks[-1] - ticks[0])


def test_the_interpreter_runs_while_rust_reads(shared_corpus: Path) -> None:
    reader = agentlog.read(shared_corpus, jobs=1)
    worker = threading.Thread(target=reader.read_all)
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())
    worker.join()
    longest_pause = max(b - a for a, b in zip(ticks, ticks[1:]))
    assert longest_pause < (ticks[-1] - ticks[0]) / 4, (longest_pause, ticks[-1] - ticks[0])


def test_a_database_is_read_session_by_session(samples: Path, tmp_path: Path) -> None:
    """Each session inside an agent's database is its own input, as the command reads it."""
    db = samples / "opencode" / "opencode-quirks.db"
    _, expected = cli_parquet(db, tmp_path)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        got = agentlog.sessions(db).read_all()
    assert got.num_rows == expected.num_rows == 2
    assert got.equals(expected)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        files = {e["source"]["file"] for e in agentlog.events(db)}
    assert files == {f"{db}#ses_synthroot0001", f"{db}#ses_synthchild001"}
