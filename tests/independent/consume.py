"""Reads agentlog's columnar output the way users do, with DuckDB and pyarrow.

usage: consume.py DIR

DIR holds `unified.jsonl`, `events.parquet` (+ `events.sessions.parquet`), `events.arrow` and a
partitioned dataset `dataset/` written from the same inputs. Checks column types, row counts,
and that usage totals per agent and day from a DuckDB query over the partitioned dataset equal
the totals computed from the unified JSONL. Exits non-zero with a message on any mismatch.
"""

import collections
import json
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.ipc
import pyarrow.parquet as pq


def fail(message):
    print(f"consume.py: {message}", file=sys.stderr)
    sys.exit(1)


def main():
    d = Path(sys.argv[1])
    lines = [json.loads(l) for l in (d / "unified.jsonl").read_text(encoding="utf-8").splitlines()]

    # pyarrow: Parquet and Arrow IPC, types as published.
    for table in (pq.read_table(d / "events.parquet"), pa.ipc.open_file(d / "events.arrow").read_all()):
        if table.num_rows != len(lines):
            fail(f"{table.num_rows} rows, {len(lines)} unified lines")
        schema = table.schema
        expected = {
            "timestamp": pa.timestamp("us", tz="UTC"),
            "seq": pa.int64(),
            "is_error": pa.bool_(),
            "exit_code": pa.int64(),
            "usage": pa.struct([(n, pa.int64()) for n in ("input_tokens", "cache_read_tokens", "cache_write_tokens",
                                                          "output_tokens", "reasoning_tokens", "total_tokens")]),
        }
        for name, typ in expected.items():
            if schema.field(name).type != typ:
                fail(f"{name} is {schema.field(name).type}, expected {typ}")
        if not pa.types.is_dictionary(schema.field("kind").type):
            fail("kind is not dictionary-encoded")
        if schema.field("tool_input").type.extension_name != "arrow.json":
            fail("tool_input is not tagged arrow.json")
        meta = schema.metadata or {}
        if meta.get(b"agentlog.schema_version") != b"1.0":
            fail(f"schema version metadata: {meta}")

    con = duckdb.connect()
    types = dict(con.sql("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(?))",
                         params=[str(d / "events.parquet")]).fetchall())
    for name, typ in {"timestamp": "TIMESTAMP WITH TIME ZONE", "tool_input": "JSON", "data": "JSON", "kind": "VARCHAR"}.items():
        if types[name] != typ:
            fail(f"DuckDB reads {name} as {types[name]}, expected {typ}")
    # Every value of every column, JSON columns parsed: DuckDB rejects invalid JSON data there.
    con.execute("CREATE TABLE everything AS SELECT * FROM read_parquet(?)", [str(d / "events.parquet")])
    rows = con.sql("SELECT count(*), count(json_type(tool_input)) + count(json_type(data)) + count(json_type(extra)) "
                   "+ count(json_type(tool_result)) + count(json_type(parts)) FROM everything").fetchall()[0][0]
    if rows != len(lines):
        fail(f"DuckDB reads {rows} rows, {len(lines)} unified lines")
    sessions = con.sql("SELECT count(*) FROM read_parquet(?)", params=[str(d / "events.sessions.parquet")]).fetchall()[0][0]
    if sessions == 0:
        fail("no sessions")

    # Usage per agent and day: DuckDB over the Hive dataset vs the unified JSONL.
    query = """
        SELECT agent, CAST(date AS VARCHAR), sum(usage.input_tokens), sum(usage.cache_read_tokens),
               sum(coalesce(usage.cache_write_tokens, 0)), sum(usage.output_tokens), count(*)
        FROM read_parquet(?, hive_partitioning = true)
        WHERE meta_type = 'usage' AND NOT copied
        GROUP BY ALL ORDER BY ALL
    """
    got = [tuple(r) for r in con.sql(query, params=[str(d / "dataset/events/**/*.parquet")]).fetchall()]
    # An event without a time is filed under its session's last known day (Hive's null
    # partition before any), as the dataset writer does.
    want = collections.defaultdict(lambda: [0, 0, 0, 0, 0])
    last_day = {}
    for e in lines:
        key = (e["agent"], e["session_id"])
        if e["timestamp"]:
            last_day[key] = e["timestamp"][:10]
        day = last_day.get(key)
        p = e["payload"]
        if e["kind"] != "meta" or p["meta_type"] != "usage" or e["copied"]:
            continue
        u = p["usage"]
        t = want[(e["agent"], day)]
        for i, k in enumerate(("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")):
            t[i] += u[k] or 0
        t[4] += 1
    want = sorted(((a, day, *t) for (a, day), t in want.items()), key=lambda r: (r[0], r[1] or ""))
    got = sorted(got, key=lambda r: (r[0], r[1] or ""))
    if got != want:
        fail(f"usage per agent and day differs:\nDuckDB: {got}\nJSONL:  {want}")
    print(f"consumers agree: {len(lines)} events, {len(got)} agent-days of usage, {sessions} sessions")


if __name__ == "__main__":
    main()
