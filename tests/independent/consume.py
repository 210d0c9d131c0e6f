"""Reads agentlog's columnar output the way users do, with DuckDB, Polars, pyarrow and pandas.

usage: consume.py DIR

DIR holds `unified.jsonl`, `events.parquet` (+ `events.sessions.parquet`), `events.arrow` (an
Arrow IPC file), `events.arrows` (an Arrow IPC stream), `interchange.json`, the unified line's
Arrow schema `event-schema.arrow` and a partitioned dataset `dataset/`,
written from the same inputs. Checks column types; that every consumer, with the call the
the guide documents (docs/src/datasets.md), reads every format to the same row count, output tokens per agent and
`file_path` of tool inputs as the unified JSONL gives; and that usage totals per agent and day
from a DuckDB query over the partitioned dataset equal the JSONL's. Exits non-zero with a
message on any mismatch.
"""

import collections
import json
import sys
from pathlib import Path

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.ipc
import pyarrow.parquet as pq


def fail(message):
    print(f"consume.py: {message}", file=sys.stderr)
    sys.exit(1)


# Output tokens are summed over values below this: the project's corpus holds counts near the
# 64-bit limit on purpose, whose sum overflows every consumer's integer columns.
SUMMABLE = 2**32


# The partition keys, typed, as the guide tells pyarrow and pandas users to give them: pandas
# infers Hive keys as dictionaries, which it cannot unify when the dataset has a null partition
# (`date=__HIVE_DEFAULT_PARTITION__`, for sessions that record no time).
PARTITIONING = ds.partitioning(pa.schema([("agent", pa.string()), ("date", pa.date32())]), flavor="hive")


def summable(tokens):
    return int(tokens) if tokens and tokens < SUMMABLE else 0


def figures(rows, output_tokens, file_paths):
    """What every consumer must agree on: rows, output tokens per agent, tool inputs' file paths."""
    return rows, {a: int(t) for a, t in sorted(output_tokens.items()) if t}, sorted(file_paths)


def from_jsonl(lines):
    return from_rows(lines, lambda value: value)


def from_arrow(table, agent=None):
    """Figures of a pyarrow table; the JSON column parsed with the standard library."""
    agents = table.column("agent").to_pylist() if agent is None else [agent] * table.num_rows
    usage = table.column("usage").combine_chunks()
    out = pc.struct_field(usage, "output_tokens").to_pylist()
    tokens = collections.Counter()
    for a, m, c, o in zip(agents, table.column("meta_type").to_pylist(), table.column("copied").to_pylist(), out):
        if m == "usage" and not c:
            tokens[a] += summable(o)
    tool_input = table.column("tool_input")
    if isinstance(tool_input.type, pa.ExtensionType):
        tool_input = pa.chunked_array([c.storage for c in tool_input.chunks], tool_input.type.storage_type)
    paths = [json.loads(t).get("file_path") for t in tool_input.to_pylist() if t and t.startswith("{")]
    return figures(table.num_rows, tokens, [p for p in paths if isinstance(p, str)])


def from_arrow_jsonl(table):
    """Figures of the unified JSONL as a pyarrow table (through DuckDB's JSON reader), which
    gives free-form objects as maps of JSON text, and other free-form values as JSON text."""
    def decode(value):
        if isinstance(value, list):
            return {k: v and json.loads(v) for k, v in value}
        return None if value is None else json.loads(value)
    return from_rows(table.to_pylist(), decode)


def from_rows(rows, decode):
    """Figures of unified events as dictionaries; `decode` turns a tool input into its value."""
    tokens = collections.Counter()
    paths = []
    for e in rows:
        p = e["payload"]
        if e["kind"] == "meta" and p["meta_type"] == "usage" and not e["copied"]:
            tokens[e["agent"]] += summable(p["usage"]["output_tokens"])
        inp = decode(p.get("input")) if e["kind"] == "tool_call" else None
        if isinstance(inp, dict) and isinstance(inp.get("file_path"), str):
            paths.append(inp["file_path"])
    return figures(len(rows), tokens, paths)


def from_polars(df):
    usage = df.filter((pl.col("meta_type") == "usage") & ~pl.col("copied"))
    tokens = usage.group_by("agent").agg(pl.col("usage").struct.field("output_tokens").filter(pl.col("usage").struct.field("output_tokens") < SUMMABLE).sum())
    paths = df.filter(pl.col("kind") == "tool_call").select(pl.col("tool_input").str.json_path_match("$.file_path"))
    return figures(df.height, dict(tokens.iter_rows()), paths.to_series().drop_nulls().to_list())


def from_pandas(df):
    usage = df[(df["meta_type"] == "usage") & ~df["copied"]]
    tokens = usage.groupby("agent", observed=True)["usage"].agg(lambda u: sum(summable(x["output_tokens"]) for x in u))
    inputs = df.loc[df["kind"] == "tool_call", "tool_input"].dropna().map(json.loads)
    paths = [i["file_path"] for i in inputs if isinstance(i, dict) and isinstance(i.get("file_path"), str)]
    return figures(len(df), tokens.to_dict(), paths)


def from_duckdb(source):
    """Figures of a DuckDB table expression, or of an Arrow table DuckDB scans."""
    con = duckdb.connect()
    if isinstance(source, str):
        con.execute(f"CREATE VIEW events AS SELECT * FROM {source}")
    else:
        con.register("events", source)
    rows = con.sql("SELECT count(*) FROM events").fetchall()[0][0]
    tokens = con.sql(f"SELECT agent, sum(usage.output_tokens) FILTER (usage.output_tokens < {SUMMABLE}) FROM events "
                     "WHERE meta_type = 'usage' AND NOT copied GROUP BY agent").fetchall()
    paths = con.sql("SELECT tool_input->>'$.file_path' FROM events WHERE kind = 'tool_call' "
                    "AND json_type(tool_input->'$.file_path') = 'VARCHAR'").fetchall()
    return figures(rows, dict(tokens), [p for (p,) in paths])


def from_jsonl_in_duckdb(path):
    """Figures of the unified JSONL read by DuckDB, one JSON value per line."""
    return from_json_in_duckdb(f"SELECT json AS e FROM read_ndjson_objects('{path}')")


def from_interchange_in_duckdb(path):
    """Figures of an interchange document read by DuckDB: every session's events."""
    return from_json_in_duckdb("SELECT unnest(json_extract(json, '$.sessions[*].events[*]')) AS e "
                               f"FROM read_json_objects('{path}', maximum_object_size = 2147483647)")


def from_json_in_duckdb(events):
    """Figures of events as DuckDB JSON values `e`, given by the query `events`."""
    con = duckdb.connect()
    con.execute(f"CREATE VIEW events AS {events}")
    rows = con.sql("SELECT count(*) FROM events").fetchall()[0][0]
    tokens = con.sql(f"""
        SELECT e->>'agent', sum(t) FILTER (t < {SUMMABLE}) FROM (
            SELECT e, CAST(e->'$.payload.usage.output_tokens' AS BIGINT) AS t FROM events
            WHERE e->>'kind' = 'meta' AND e->>'$.payload.meta_type' = 'usage' AND NOT CAST(e->'copied' AS BOOLEAN))
        GROUP BY ALL""").fetchall()
    paths = con.sql("SELECT e->>'$.payload.input.file_path' FROM events WHERE e->>'kind' = 'tool_call' "
                    "AND json_type(e->'$.payload.input.file_path') = 'VARCHAR'").fetchall()
    return figures(rows, dict(tokens), [p for (p,) in paths])


def from_jsonl_in_pandas(df):
    return from_rows(df.to_dict("records"), lambda value: value)


def from_jsonl_in_polars(df):
    """Rows and output tokens: Polars writes the JSON text of free-form values with backslashes
    unescaped, so JSON paths into them are not compared (the guide says to use Parquet)."""
    usage = df.filter((pl.col("kind") == "meta") & (pl.col("payload").struct.field("meta_type") == "usage")
                      & ~pl.col("copied"))
    t = pl.col("payload").struct.field("usage").struct.field("output_tokens")
    tokens = usage.group_by("agent").agg(t.filter(t < SUMMABLE).sum())
    return figures(df.height, dict(tokens.iter_rows()), [])


def same_everywhere(d, lines):
    """Every consumer reads every format, with the guide's calls, to the JSONL's figures."""
    want = from_jsonl(lines)
    dataset = d / "dataset" / "events"
    hive = str(dataset / "**" / "*.parquet")
    readers = {
        "pyarrow Parquet": lambda: from_arrow(pq.read_table(d / "events.parquet")),
        "pyarrow IPC file": lambda: from_arrow(pa.ipc.open_file(d / "events.arrow").read_all()),
        "pyarrow IPC stream": lambda: from_arrow(pa.ipc.open_stream(d / "events.arrows").read_all()),
        "pyarrow dataset": lambda: from_arrow(ds.dataset(dataset, partitioning=PARTITIONING).to_table()),
        "Polars Parquet": lambda: from_polars(pl.read_parquet(d / "events.parquet")),
        "Polars IPC file": lambda: from_polars(pl.read_ipc(d / "events.arrow")),
        "Polars IPC file, lazily": lambda: from_polars(pl.scan_ipc(d / "events.arrow").collect()),
        "Polars IPC stream": lambda: from_polars(pl.read_ipc_stream(d / "events.arrows")),
        "Polars dataset": lambda: from_polars(pl.read_parquet(hive, hive_partitioning=True)),
        "pandas Parquet": lambda: from_pandas(pd.read_parquet(d / "events.parquet")),
        "pandas IPC file": lambda: from_pandas(pd.read_feather(d / "events.arrow")),
        "pandas dataset": lambda: from_pandas(pd.read_parquet(dataset, partitioning=PARTITIONING)),
        "DuckDB Parquet": lambda: from_duckdb(f"read_parquet('{d / 'events.parquet'}')"),
        "DuckDB IPC file": lambda: from_duckdb(pa.ipc.open_file(d / "events.arrow").read_all()),
        "DuckDB dataset": lambda: from_duckdb(f"read_parquet('{hive}', hive_partitioning = true)"),
    }
    unified = d / "unified.jsonl"
    readers["DuckDB JSONL"] = lambda: from_jsonl_in_duckdb(unified)
    interchange = d / "interchange.json"
    readers["DuckDB interchange"] = lambda: from_interchange_in_duckdb(interchange)
    readers["pandas interchange"] = lambda: from_jsonl_in_pandas(pd.json_normalize(
        json.loads(interchange.read_text(encoding="utf-8"))["sessions"], record_path="events", max_level=0))
    readers["pandas JSONL"] = lambda: from_jsonl_in_pandas(pd.read_json(unified, lines=True, dtype=False))
    line_schema = pl.read_ipc_schema(d / "event-schema.arrow")
    readers["Polars JSONL"] = lambda: from_jsonl_in_polars(pl.read_ndjson(unified, schema=line_schema))
    readers["pyarrow JSONL"] = lambda: from_arrow_jsonl(duckdb.sql(f"SELECT * FROM read_json('{unified}')").arrow().read_all())
    for name, read in readers.items():
        expected = (want[0], want[1], []) if name == "Polars JSONL" else want
        try:
            got = read()
        except Exception as e:  # noqa: BLE001 - any failure to load is the finding
            fail(f"{name}: {type(e).__name__}: {e}")
        if got != expected:
            fail(f"{name} reads {got[0]} rows, output tokens {got[1]}, {len(got[2])} file paths; "
                 f"the JSONL has {want[0]}, {want[1]}, {len(want[2])}")
    print(f"{len(readers)} readers agree: {want[0]} rows, output tokens {want[1]}, {len(want[2])} file paths")


def main():
    d = Path(sys.argv[1])
    lines = [json.loads(l) for l in (d / "unified.jsonl").read_text(encoding="utf-8").splitlines()]

    same_everywhere(d, lines)

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
                                                          "cache_write_1h_tokens", "output_tokens", "reasoning_tokens",
                                                          "total_tokens")]),
            "cost_usd": pa.float64(),
        }
        for name, typ in expected.items():
            if schema.field(name).type != typ:
                fail(f"{name} is {schema.field(name).type}, expected {typ}")
        # Plain strings: no dictionaries to unify across files or batches.
        if schema.field("kind").type != pa.string():
            fail(f"kind is {schema.field('kind').type}, expected string")
        meta = schema.metadata or {}
        if meta.get(b"agentlog.schema_version") != b"1.6":
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
        SELECT agent, CAST(date AS VARCHAR), sum(usage.input_tokens), sum(coalesce(usage.cache_read_tokens, 0)),
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
