"""agentlog's OpenTelemetry traces in a real Arize Phoenix server, read back through Phoenix's
own client (see README.md here).

    PY=$(sh tests/otlp/install.sh) && "$PY" -m pytest tests/otlp -q

Phoenix runs on 127.0.0.1 on free ports with a temporary working directory and telemetry off,
one server for the session (a second one for $AGENTLOG_AGENTS_OUT, whose sessions may also be in
the corpus: Phoenix keeps a trace in the project that first received it). agentlog sends the
traces itself (`--otlp-endpoint`); the tests of Phoenix's own behaviour post synthetic spans.
"""

from __future__ import annotations

import collections
import os
import shutil
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import phoenix_helpers as ph  # noqa: E402

CORPUS = ph.REPO / "corpus"
AGENTS_OUT = os.environ.get("AGENTLOG_AGENTS_OUT")
KEEP = os.environ.get("AGENTLOG_PHOENIX_KEEP")  # keep the servers' working directories (logs, phoenix.db)


def _report(config, line: str) -> None:
    """A line on the terminal, past pytest's capture (timings, where the servers run)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None:
        print(f"[phoenix] {line}", file=sys.stderr)
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line(f"[phoenix] {line}")


def _serve(config, name: str):
    """A Phoenix server for the session; stopped (SIGTERM, then SIGKILL) however the tests end."""
    if not Path(ph.AGENTLOG).exists():
        pytest.skip(f"no agentlog binary at {ph.AGENTLOG} (set AGENTLOG_BIN)")
    server = ph.Phoenix(ph.new_workdir(f"agentlog-phoenix-{name}-"))
    try:
        server.start()
        _report(config, f"{name}: Phoenix ready in {server.startup_seconds:.1f} s on {server.base_url} "
                        f"(gRPC {server.grpc_port}, working dir {server.workdir})")
        yield server
    finally:
        server.stop()
        if KEEP:
            _report(config, f"{name}: kept {server.workdir}")
        else:
            shutil.rmtree(server.workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def phoenix(pytestconfig):
    yield from _serve(pytestconfig, "main")


@pytest.fixture(scope="session")
def agents_phoenix(pytestconfig):
    yield from _serve(pytestconfig, "agents")


# --- the exports -----------------------------------------------------------------------------


def _agents_out_inputs(root: Path) -> list[str]:
    """The session roots of every scenario of a prepared harness run (tests/agents), as
    tests/agents/harness.py's `convert` reads them; scenarios the harness marked unsupported or
    run with a shared HOME are left out."""
    sys.path.insert(0, str(ph.REPO / "tests" / "agents"))
    import harness  # noqa: PLC0415

    inputs: list[str] = []
    for ledger_path in sorted(root.glob("*/*/ledger.json")):
        meta = harness.load_ledger(ledger_path.parent)["meta"]
        if meta.get("unsupported") or meta.get("shared_home") or meta.get("agent") not in harness.ADAPTERS:
            continue
        home = ledger_path.parent / "home"
        inputs += [str(r) for r in harness.ADAPTERS[meta["agent"]].session_roots(home) if r.exists()]
    return inputs


@dataclass
class Export:
    name: str
    project: str
    inputs: list[str]
    server: ph.Phoenix
    expected: ph.Expected
    spans: list[dict]  # as Phoenix's client returns them, after the export
    how: str  # "agentlog --otlp-endpoint"
    seconds: float


DATASETS = ["corpus", "agents-out"]


@pytest.fixture(scope="session", params=DATASETS)
def export(request, pytestconfig) -> Export:
    """A data set sent once to Phoenix, and what Phoenix then holds."""
    if request.param == "corpus":
        inputs, server = [str(CORPUS)], request.getfixturevalue("phoenix")
    else:
        if not AGENTS_OUT:
            pytest.skip("AGENTLOG_AGENTS_OUT is not set (a directory of a tests/agents harness run)")
        inputs = _agents_out_inputs(Path(AGENTS_OUT))
        if not inputs:
            pytest.fail(f"no session files under {AGENTS_OUT}")
        server = request.getfixturevalue("agents_phoenix")
    project = request.param
    expected = ph.expected(inputs)
    assert expected.sessions, f"agentlog found no session in {inputs[:3]}"
    began = time.monotonic()
    how = ph.send(inputs, server.traces_endpoint, project)
    spans = server.wait_for_spans(project, len(expected.span_ids))
    seconds = time.monotonic() - began
    _report(pytestconfig, f"{project}: {len(expected.sessions)} sessions, {len(expected.span_ids)} spans sent "
                          f"({how}), {len(spans)} read back, in {seconds:.1f} s")
    return Export(request.param, project, inputs, server, expected, spans, how, seconds)


def _roots(spans: list[dict]) -> dict[str, dict]:
    """The root span of each trace (asserted unique in test_one_trace_per_session)."""
    return {s["context"]["trace_id"]: s for s in spans if s["parent_id"] is None}


def _session_of(spans: list[dict]) -> dict[str, tuple[str, str]]:
    """trace id -> (agent, session id), from the trace's root `invoke_agent` span."""
    return {t: (r["attributes"].get("gen_ai.agent.name"), r["attributes"].get("gen_ai.conversation.id"))
            for t, r in _roots(spans).items()}


def _op(spans: list[dict], name: str) -> list[dict]:
    return [s for s in spans if ph.operation(s) == name]


# --- 1. what Phoenix holds matches what agentlog says ---------------------------------------


def test_every_span_arrives_once_with_its_ids(export):
    """Every span id agentlog wrote is in Phoenix exactly once, in the trace and under the parent
    it was sent with."""
    ids = collections.Counter(s["context"]["span_id"] for s in export.spans)
    assert [i for i, n in ids.items() if n > 1] == []
    assert set(ids) == export.expected.span_ids
    sent = {}
    for s in ph.iter_json_spans(export.expected.requests):
        sent.setdefault(s["spanId"], (s["traceId"], s.get("parentSpanId"), s["name"]))
    got = {s["context"]["span_id"]: (s["context"]["trace_id"], s["parent_id"], s["name"]) for s in export.spans}
    assert got == sent


def test_one_trace_per_session(export):
    traces = ph.by_trace(export.spans)
    assert len(traces) == len(export.expected.sessions)
    for trace_id, spans in traces.items():
        roots = [s for s in spans if s["parent_id"] is None]
        assert len(roots) == 1, f"trace {trace_id}: roots {[s['name'] for s in roots]}"
        root = roots[0]
        assert ph.operation(root) == "invoke_agent", root["name"]
        assert root["span_kind"] == "AGENT", root["name"]
        conversation = root["attributes"].get("gen_ai.conversation.id")
        # every span of the trace that names a conversation names the root's
        assert {s["attributes"].get("gen_ai.conversation.id") for s in spans} <= {conversation, None}
    assert set(_session_of(export.spans).values()) == export.expected.sessions


def test_one_chat_span_per_model_response(export):
    sessions = _session_of(export.spans)
    chats = _op(export.spans, "chat")
    assert len(chats) == export.expected.chat_spans
    per_session = collections.Counter(sessions[s["context"]["trace_id"]][1] for s in chats)
    assert per_session == export.expected.chats_per_session


def test_one_tool_span_per_tool_call(export):
    sessions = _session_of(export.spans)
    tools = _op(export.spans, "execute_tool")
    assert len(tools) == export.expected.tool_spans
    per_session = collections.Counter(sessions[s["context"]["trace_id"]][1] for s in tools)
    assert per_session == export.expected.tools_per_session


def test_genai_attributes(export):
    """The GenAI attributes are there, and Phoenix read them as it should: span kind from
    gen_ai.operation.name, OpenInference model, token and tool attributes derived from gen_ai.*."""
    problems = []
    for s in export.spans:
        a, op = s["attributes"], ph.operation(s)
        if op not in ("invoke_agent", "chat", "execute_tool"):
            problems.append((s["name"], "gen_ai.operation.name", op))
            continue
        kind = {"invoke_agent": "AGENT", "chat": "LLM", "execute_tool": "TOOL"}[op]
        if s["span_kind"] != kind:
            problems.append((s["name"], "span_kind", s["span_kind"]))
        if op in ("invoke_agent", "chat") and not a.get("gen_ai.provider.name"):
            problems.append((s["name"], "gen_ai.provider.name", None))
        if op == "chat":
            model = a.get("gen_ai.request.model")
            if model is None and s["name"] != "chat unknown":
                problems.append((s["name"], "gen_ai.request.model", None))
            if model is not None and (s["name"] != f"chat {model}" or a.get("llm.model_name") != model):
                problems.append((s["name"], "llm.model_name", a.get("llm.model_name")))
            pairs = [("gen_ai.usage.input_tokens", "llm.token_count.prompt"),
                     ("gen_ai.usage.output_tokens", "llm.token_count.completion"),
                     ("gen_ai.usage.cache_read.input_tokens", "llm.token_count.prompt_details.cache_read"),
                     ("gen_ai.usage.cache_creation.input_tokens", "llm.token_count.prompt_details.cache_write")]
            for genai, openinference in pairs:
                if not isinstance(a.get(genai), int) or a.get(openinference) != a[genai]:
                    problems.append((s["name"], openinference, a.get(genai), a.get(openinference)))
            total = a["gen_ai.usage.input_tokens"] + a["gen_ai.usage.output_tokens"]
            if a.get("llm.token_count.total") != total:
                problems.append((s["name"], "llm.token_count.total", a.get("llm.token_count.total"), total))
            if a.get("session.id") != a.get("gen_ai.conversation.id"):
                problems.append((s["name"], "session.id", a.get("session.id")))
        if op == "execute_tool":
            name = a.get("gen_ai.tool.name")
            if not name or s["name"] != f"execute_tool {name}" or a.get("tool.name") != name:
                problems.append((s["name"], "gen_ai.tool.name / tool.name", name, a.get("tool.name")))
    assert problems == []


def test_chat_and_tool_spans_carry_the_events_values(export):
    """Per session, the chat spans' (model, token counts) and the tool spans' names are, as
    multisets, those of the unified events' usage and tool calls."""
    sessions = _session_of(export.spans)
    got_chats, got_tools = collections.defaultdict(collections.Counter), collections.defaultdict(collections.Counter)
    for s in export.spans:
        a, session = s["attributes"], sessions[s["context"]["trace_id"]][1]
        if ph.operation(s) == "chat":
            got_chats[session][(a.get("gen_ai.request.model"), a["gen_ai.usage.input_tokens"],
                                a["gen_ai.usage.output_tokens"], a["gen_ai.usage.cache_read.input_tokens"],
                                a["gen_ai.usage.cache_creation.input_tokens"],
                                a["gen_ai.usage.reasoning.output_tokens"])] += 1
        elif ph.operation(s) == "execute_tool":
            got_tools[session][a["gen_ai.tool.name"]] += 1
    assert dict(got_chats) == export.expected.chat_values
    assert dict(got_tools) == export.expected.tool_names


def _capped(counter: collections.Counter) -> collections.Counter:
    return collections.Counter({k: min(v, ph.MAX_COUNT) for k, v in counter.items() if v})


def test_token_totals_equal_agentlog_usage(export):
    """Per session: the chat spans' token sums equal `agentlog usage --by session --json` (which
    counts a subagent's responses under the session that started it; the OTel export gives a
    subagent with a session of its own a trace of its own), and Phoenix's own totals per trace
    equal the sums of the trace's chat spans."""
    sessions = _session_of(export.spans)
    per_trace = collections.defaultdict(collections.Counter)
    for s in _op(export.spans, "chat"):
        a = s["attributes"]
        per_trace[s["context"]["trace_id"]].update({
            "responses": 1,
            "prompt": a["gen_ai.usage.input_tokens"],
            "output": a["gen_ai.usage.output_tokens"],
            "cache_read": a["gen_ai.usage.cache_read.input_tokens"],
            "cache_write": a["gen_ai.usage.cache_creation.input_tokens"],
            "reasoning": a["gen_ai.usage.reasoning.output_tokens"],
        })
    sums = collections.defaultdict(collections.Counter)
    for trace_id, counts in per_trace.items():
        sums[export.expected.usage_session[sessions[trace_id][1]]].update(counts)
    want = {}
    for session, row in export.expected.usage.items():
        if row["responses"]:
            want[session] = collections.Counter({
                "responses": row["responses"],
                # gen_ai.usage.input_tokens is the whole prompt: agentlog's input_tokens are the
                # uncached part, cache reads and writes come on top
                "prompt": row["input_tokens"] + row["cache_read_tokens"] + row["cache_write_tokens"],
                "output": row["output_tokens"],
                "cache_read": row["cache_read_tokens"],
                "cache_write": row["cache_write_tokens"],
                "reasoning": row["reasoning_tokens"],
            })
    assert {k: _capped(v) for k, v in sums.items()} == {k: _capped(v) for k, v in want.items()}

    # Phoenix's computed totals per trace (what its UI shows) agree too; asked session by session,
    # as a trace whose sum does not fit in 64 bits fails the whole page with a 500 (SQLite
    # "integer overflow"; test_token_counts_beyond_64_bits_break_phoenix_totals)
    root_of = {conversation: trace_id for trace_id, (_, conversation) in sessions.items()}
    mismatched, failed = [], set()
    for conversation, trace_id in sorted(root_of.items()):
        # a connection each: after a 500 the server drops the connection
        r = httpx.get(f"{export.server.base_url}/v1/projects/{export.project}/traces",
                      params={"session_identifier": conversation, "limit": 1000}, timeout=60)
        if r.status_code == 500:
            failed.add(trace_id)
            continue
        r.raise_for_status()
        rows = {t["trace_id"]: t for t in r.json()["data"]}
        assert set(rows) == {trace_id}, conversation
        t, w = rows[trace_id], per_trace.get(trace_id, collections.Counter())
        got_t = (t["token_count_prompt"] or 0, t["token_count_completion"] or 0, t["token_count_total"] or 0)
        want_t = (w["prompt"], w["output"], w["prompt"] + w["output"])
        if got_t != want_t:
            mismatched.append((sessions[trace_id], got_t, want_t))
    assert mismatched == []
    # Phoenix sums prompt and completion counts separately in SQL
    assert failed == {t for t, w in per_trace.items() if w["prompt"] > ph.MAX_COUNT or w["output"] > ph.MAX_COUNT}


def test_token_counts_beyond_64_bits_break_phoenix_totals(phoenix):
    """agentlog holds a count too large for OTLP at the largest 64-bit integer. Phoenix stores
    such a span, but summing it overflows SQLite: the project's trace and session lists and its
    token total fail (HTTP 500, GraphQL error), for every trace of the project."""
    project = "overflow-probe"
    trace, root = uuid.uuid4().hex, uuid.uuid4().hex[:16]
    def chat(output):
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                      "gen_ai.usage.input_tokens": 1, "gen_ai.usage.output_tokens": output}
        return _span(trace, uuid.uuid4().hex[:16], "chat m", T0, T0 + SECOND, root, attributes)

    ph.post_requests([_request(_span(trace, root, "invoke_agent probe", T0, T0 + SECOND,
                                     attributes={"gen_ai.operation.name": "invoke_agent"}),
                               chat(ph.MAX_COUNT), chat(1)),  # each fits; their sum does not
                      _request(_span(uuid.uuid4().hex, uuid.uuid4().hex[:16], "a healthy trace", T0, T0 + SECOND))],
                     phoenix.traces_endpoint, project)
    _probe_trace(phoenix)
    assert len(phoenix.spans(project)) == 4  # stored
    r = httpx.get(f"{phoenix.base_url}/v1/projects/{project}/traces", params={"limit": 10})
    assert r.status_code == 500
    assert "integer overflow" in phoenix.log.read_text(errors="replace")
    q = '{ projects { edges { node { name tokenCountTotal } } } }'
    doc = httpx.post(f"{phoenix.base_url}/graphql", json={"query": q}).json()
    assert doc.get("errors") and doc["errors"][0]["path"][-1] == "tokenCountTotal"


# --- 2. sending again ---------------------------------------------------------------------------


def _snapshot(spans: list[dict]) -> dict[str, tuple]:
    return {s["context"]["span_id"]: (s["context"]["trace_id"], s["parent_id"], s["name"], s["start_time"],
                                      s["end_time"], s["status_code"], tuple(sorted(s["attributes"].items())))
            for s in spans}


def test_sending_the_export_twice_changes_nothing(export):
    """Phoenix ignores a span whose id it has (first write wins): a second export of the same
    sessions leaves every span as it was, none duplicated."""
    before = _snapshot(export.server.spans(export.project))
    assert len(before) == len(export.expected.span_ids)
    ph.send(export.inputs, export.server.traces_endpoint, export.project)
    # ingestion is asynchronous; a marker trace sent after the export shows it has been processed
    _probe_trace(export.server)
    after = export.server.spans(export.project)
    assert len(after) == len(before)
    assert _snapshot(after) == before


def _nanos(iso: str) -> int:
    from datetime import datetime

    t = datetime.fromisoformat(iso)
    return int(t.timestamp()) * 1_000_000_000 + t.microsecond * 1000


# Synthetic spans, to see what Phoenix does with a span sent again with other values.

T0 = 1_800_000_000 * 1_000_000_000  # 2027-01-15T08:00:00Z
SECOND = 1_000_000_000


def _span(trace: str, span: str, name: str, start: int, end: int, parent: str | None = None,
          attributes: dict | None = None, status: dict | None = None) -> dict:
    def value(v):
        return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": str(v)}

    s = {"traceId": trace, "spanId": span, "name": name, "kind": 1,
         "startTimeUnixNano": str(start), "endTimeUnixNano": str(end),
         "attributes": [{"key": k, "value": value(v)} for k, v in (attributes or {}).items()],
         "status": status or {}}
    if parent:
        s["parentSpanId"] = parent
    return s


def _request(*spans: dict) -> dict:
    return {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "probe"}}]},
                               "scopeSpans": [{"scope": {"name": "agentlog-tests"}, "spans": list(spans)}]}]}


def _probe_trace(server: ph.Phoenix, project: str = "markers") -> str:
    """Sends a one-span trace with new ids (to a project of its own) and waits until Phoenix
    has stored it; spans sent before it have been processed by then (Phoenix has one ingestion
    queue). Returns its trace id."""
    trace = uuid.uuid4().hex
    ph.post_requests([_request(_span(trace, uuid.uuid4().hex[:16], "marker", T0, T0 + 1))],
                     server.traces_endpoint, project)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.spans(project, trace_ids=[trace]):
            return trace
        time.sleep(0.1)
    raise AssertionError(f"marker trace {trace} never arrived")


def _trace_row(server: ph.Phoenix, project: str, trace: str) -> dict:
    rows = [t for t in server.rest(f"/v1/projects/{project}/traces", limit=1000)["data"] if t["trace_id"] == trace]
    assert len(rows) == 1
    return rows[0]


def test_resent_span_with_later_end_is_ignored_but_extends_the_trace(phoenix):
    """A span sent again with the same ids and a later end, another name, status and attribute
    value is not updated: the first version stays. The trace's (and session's) time range still
    grows to the later end. New child spans sent later join the trace, and their tokens roll up
    into the root's cumulative counts."""
    project = "resend-probe"
    trace, root, child = uuid.uuid4().hex, uuid.uuid4().hex[:16], uuid.uuid4().hex[:16]
    session = f"probe-{trace[:8]}"
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": session, "probe.version": 1}
    first = _span(trace, root, "invoke_agent probe", T0, T0 + SECOND, attributes=agent)
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
            "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 10}
    ph.post_requests([_request(first, _span(trace, child, "chat m", T0, T0 + SECOND // 2, root, chat))],
                     phoenix.traces_endpoint, project)
    _probe_trace(phoenix)

    def root_span():
        spans = phoenix.spans(project, trace_ids=[trace])
        roots = [s for s in spans if s["context"]["span_id"] == root]
        assert len(roots) == 1
        return roots[0], spans

    original, spans = root_span()
    assert len(spans) == 2
    assert _nanos(original["end_time"]) == T0 + SECOND

    # the same root again, identical, then with a later end and other values
    later = _span(trace, root, "invoke_agent probe (grown)", T0, T0 + 60 * SECOND,
                  attributes={**agent, "probe.version": 2}, status={"code": 2, "message": "changed"})
    ph.post_requests([_request(first)], phoenix.traces_endpoint, project)
    ph.post_requests([_request(later)], phoenix.traces_endpoint, project)
    _probe_trace(phoenix)
    now, spans = root_span()
    assert len(spans) == 2
    assert now == original  # name, times, status, attributes: all of the first version
    row = _trace_row(phoenix, project, trace)
    assert _nanos(row["end_time"]) == T0 + 60 * SECOND  # ... but the trace's range took the later end
    sessions = phoenix.rest(f"/v1/projects/{project}/sessions", limit=1000)["data"]
    [s] = [s for s in sessions if s["session_id"] == session]
    assert _nanos(s["end_time"]) == T0 + 60 * SECOND

    # a new chat span of the grown session
    ph.post_requests([_request(_span(trace, uuid.uuid4().hex[:16], "chat m", T0 + 120 * SECOND, T0 + 121 * SECOND,
                                     root, {**chat, "gen_ai.usage.input_tokens": 7, "gen_ai.usage.output_tokens": 3}))],
                     phoenix.traces_endpoint, project)
    _probe_trace(phoenix)
    now, spans = root_span()
    assert len(spans) == 3
    assert now == original
    row = _trace_row(phoenix, project, trace)
    assert (row["token_count_prompt"], row["token_count_completion"]) == (107, 13)
    assert _nanos(row["end_time"]) == T0 + 121 * SECOND


def test_same_span_twice_in_one_request_keeps_the_first(phoenix):
    project = "resend-probe"
    trace, span = uuid.uuid4().hex, uuid.uuid4().hex[:16]
    ph.post_requests([_request(_span(trace, span, "first", T0, T0 + SECOND),
                               _span(trace, span, "second", T0, T0 + 5 * SECOND))],
                     phoenix.traces_endpoint, project)
    _probe_trace(phoenix)
    spans = phoenix.spans(project, trace_ids=[trace])
    assert [(s["name"], _nanos(s["end_time"])) for s in spans] == [("first", T0 + SECOND)]


def test_a_trace_stays_in_its_first_project(phoenix):
    """Spans of a trace Phoenix has are ignored when sent again to another project, even new ones."""
    trace, root = uuid.uuid4().hex, uuid.uuid4().hex[:16]
    ph.post_requests([_request(_span(trace, root, "root", T0, T0 + SECOND))], phoenix.traces_endpoint, "project-a")
    _probe_trace(phoenix)
    ph.post_requests([_request(_span(trace, root, "root", T0, T0 + SECOND),
                               _span(trace, uuid.uuid4().hex[:16], "new child", T0, T0 + SECOND, root))],
                     phoenix.traces_endpoint, "project-b")
    _probe_trace(phoenix)
    in_a = phoenix.spans("project-a", trace_ids=[trace])
    in_b = phoenix.spans("project-b", trace_ids=[trace])
    assert sorted(s["name"] for s in in_a) == ["new child", "root"]
    assert in_b == []


# --- 3. agentlog's own sender (--otlp-endpoint) --------------------------------------------------

ONE_SESSION = CORPUS / "claude" / "user-and-assistant-text.jsonl"


def test_agentlog_sends_gzipped_protobuf(phoenix, tmp_path):
    path, session = ph.copy_with_new_session(ONE_SESSION, tmp_path)
    want = {s["spanId"] for s in ph.iter_json_spans(ph.otel_requests([str(path)]))}
    assert want
    p = ph.send_with_agentlog([str(path)], phoenix.traces_endpoint, "gzip", "--otlp-gzip")
    assert p.returncode == 0, p.stderr
    _probe_trace(phoenix)
    got = phoenix.spans("gzip")
    assert {s["context"]["span_id"] for s in got} == want
    assert {s["attributes"].get("gen_ai.conversation.id") for s in got} == {session, None}


def test_phoenix_refuses_otlp_json_and_agentlog_says_so(phoenix, tmp_path):
    """Phoenix takes protobuf only: `--otlp-protocol json` gets HTTP 415, which agentlog reports
    and does not retry; nothing is stored."""
    path, _ = ph.copy_with_new_session(ONE_SESSION, tmp_path)
    began = time.monotonic()
    p = ph.send_with_agentlog([str(path)], phoenix.traces_endpoint, "json", "--otlp-protocol", "json")
    assert p.returncode not in (0, 1)
    assert "415" in p.stderr
    assert time.monotonic() - began < 30  # not retried for --otlp-retry-for (300 s)
    _probe_trace(phoenix)
    assert phoenix.spans("json") == []


def _follow_growing_session(phoenix, tmp_path) -> tuple[dict, dict]:
    """A recorded Claude Code session (new session id) followed by `agentlog watch --once
    --state` into Phoenix as it grows: a run on its start, one on all of it while the file
    is still being written, one once it has settled (mtime 10 s ago; watch holds a response's
    usage back until the file is 1.5 s old). Returns (convert's spans, Phoenix's spans), by id."""
    source = CORPUS / "recorded" / "claude" / "2.1.328" / "tools.jsonl"
    (tmp_path / "src").mkdir()
    path, _ = ph.copy_with_new_session(source, tmp_path / "src")
    lines = path.read_text().splitlines(keepends=True)
    live = tmp_path / "live" / path.name
    live.parent.mkdir()
    state = tmp_path / "watch.state"

    def watch(*options):
        p = ph.agentlog("watch", str(live.parent), "--once", "--state", str(state), "-q",
                        "--otlp-endpoint", phoenix.traces_endpoint, "--otlp-header", "x-project-name=watch",
                        *options, check=False)
        assert p.returncode == 0, p.stderr

    # the first run sees the session up to its first tool call, before the call's output
    first_call = next(i for i, line in enumerate(lines) if '"type":"tool_use"' in line)
    live.write_text("".join(lines[: first_call + 1]))
    watch()
    live.write_text("".join(lines))
    watch()
    settled = time.time() - 10
    os.utime(live, (settled, settled))
    watch("--session-quiet", "0")
    _probe_trace(phoenix)
    want = {s["spanId"]: s for s in ph.iter_json_spans(ph.otel_requests([str(path)]))}
    trace = {s["traceId"] for s in want.values()}
    got = {s["context"]["span_id"]: s for s in phoenix.spans("watch", trace_ids=list(trace))}
    return want, got


@pytest.fixture(scope="module")
def followed(phoenix, tmp_path_factory):
    return _follow_growing_session(phoenix, tmp_path_factory.mktemp("watch"))


def test_watch_sends_each_span_of_a_growing_session(followed):
    """What watch sent while the session grew is, once it has settled, the spans convert makes
    of the whole file: the same ids, each once."""
    want, got = followed
    assert len(want) >= 5
    assert set(got) == set(want)


def test_watch_leaves_phoenix_with_convert_times(followed):
    """Phoenix keeps the first version of a span (README.md): watch sends each span once, in its
    final form, so Phoenix holds the times convert gives; the session's own span and calls not
    answered yet wait until the session's files are quiet, across runs."""
    want, got = followed
    mismatched = {i: (got[i]["name"], got[i]["start_time"], got[i]["end_time"])
                  for i, s in want.items()
                  if i in got and (_nanos(got[i]["start_time"]), _nanos(got[i]["end_time"]))
                  != (int(s["startTimeUnixNano"]), int(s["endTimeUnixNano"]))}
    assert mismatched == {}
