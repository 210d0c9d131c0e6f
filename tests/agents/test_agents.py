"""agentlog's readers on session files written by the real agents.

Each case is one agent version x scenario run by ``harness.py`` against the
scripted model server: the session files the agent wrote are converted with
agentlog and compared with the server's ledger (what was typed, what the
model served, what the agent ran).

    python3 -m pytest tests/agents/test_agents.py            # runs the pinned agents first
    AGENTLOG_AGENTS_OUT=DIR python3 -m pytest tests/agents/   # checks a prepared run (any versions in DIR)

``$AGENTLOG_BIN`` names the agentlog binary (default target/debug/agentlog,
relative to the repository root).  Cases skip when the binary is missing or
the agents cannot be installed (no npm, no registry); the conversion checks
of OpenCode and Kilo CLI skip when the binary has no reader for them (their
name is not a value of ``convert --from``).

OpenCode and Kilo CLI keep their sessions in a SQLite store (the database
with its -wal and -shm): a case's session file is the database, each of its
sessions one unit of agentlog's output.  They store no response id, so each
served response is paired with the usage event that has its counts, which
the server makes distinct.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402

PREPARED = os.environ.get("AGENTLOG_AGENTS_OUT")
# AGENTLOG_AGENTS=claude,codex runs only those agents.
ONLY = [a for a in os.environ.get("AGENTLOG_AGENTS", "").split(",") if a]


_skip = harness.skip_or_fail


def _cases():
    if PREPARED:
        root = Path(PREPARED)
        found = sorted((p.parent.parent.name, p.parent.name) for p in root.glob("*/*/ledger.json"))
        return [f"{d}/{s}" for d, s in found]
    agents = {a: spec for a, spec in harness.AGENTS.items() if not ONLY or a in ONLY}
    return [f"{a}-{spec.pinned}/{s}" for a, spec in agents.items() for s in spec.scenarios]


CASES = _cases()


@pytest.fixture(scope="session")
def runs_dir(tmp_path_factory) -> Path:
    if not harness.agentlog_bin().exists():
        _skip(f"agentlog binary not found at {harness.agentlog_bin()} (build it or set AGENTLOG_BIN)")
    if PREPARED:
        return Path(PREPARED)
    if not shutil.which("npm"):
        _skip("npm is not available to install the agents")
    out = tmp_path_factory.mktemp("agents")
    agents = ["--agent", ",".join(ONLY)] if ONLY else []
    p = subprocess.run([sys.executable, str(HERE / "harness.py"), "run", "--out", str(out), *agents],
                       capture_output=True, text=True, timeout=1800)
    (out / "harness-output.txt").write_text(p.stdout + p.stderr)
    if not list(out.glob("*/*/ledger.json")):
        _skip("the harness ran no agent (install failed?):\n" + (p.stdout + p.stderr)[-3000:])
    return out


_converted: dict[str, harness.Converted] = {}


def _ledger_of(runs_dir: Path, name: str) -> dict:
    """The case's ledger; skips unsupported scenarios and runs that shared a HOME."""
    scen_dir = runs_dir / name
    if not (scen_dir / "ledger.json").exists():
        pytest.fail(f"the harness wrote no ledger for {name}")
    ledger = harness.load_ledger(scen_dir)
    meta = ledger["meta"]
    if meta.get("unsupported"):
        pytest.skip(f"{name}: {meta['unsupported']}")
    if meta.get("shared_home"):
        pytest.skip(f"{name}: run with --shared-home, the files hold the sessions of other scenarios too")
    return ledger


@pytest.fixture
def ran(request, runs_dir) -> dict:
    """The ledger of a case, for the checks that need no conversion."""
    return _ledger_of(runs_dir, request.param)


@pytest.fixture
def case(request, runs_dir, tmp_path_factory) -> harness.Converted:
    name = request.param
    if name not in _converted:
        scen_dir = runs_dir / name
        agent = _ledger_of(runs_dir, name)["meta"]["agent"]
        if harness.AGENTS[agent].store and not harness.agentlog_reads(agent):
            # not _skip: a binary built before the reader existed is no failure of the agents
            pytest.skip(f"{harness.agentlog_bin()} has no reader for {agent} (not a value of convert --from)")
        _converted[name] = harness.convert(scen_dir, tmp_path_factory.mktemp(name.replace("/", "-")))
    c = _converted[name]
    if not c.files:
        pytest.fail(f"{name}: the agent wrote no session file; invocations: "
                    + json.dumps(c.ledger["meta"].get("invocations"), indent=1)[-3000:])
    return c


def cases(fn):
    return pytest.mark.parametrize("case", CASES, indirect=True)(fn)


def runs(fn):
    return pytest.mark.parametrize("ran", CASES, indirect=True)(fn)


# ---------------------------------------------------------------------------
# helpers


def _agent(c) -> str:
    return c.ledger["meta"]["agent"]


def _scenario(c) -> str:
    return c.ledger["meta"]["scenario"]


def _store(c) -> bool:
    """Whether the agent keeps its sessions in a SQLite store (OpenCode, Kilo CLI)."""
    return bool(harness.AGENTS[_agent(c)].store)


def _skip_store(c, why: str) -> None:
    if _store(c):
        pytest.skip(why)


def _is_main_thread(ev) -> bool:
    return not (ev.get("is_sidechain") or ev.get("agent_id") or ev.get("parent_session_id"))


def _same_file(a: str, b: Path) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:
        return False


def _record_type(f: Path, line: int) -> str:
    with open(f, "rb") as fh:
        for i, l in enumerate(fh, 1):
            if i == line:
                try:
                    d = json.loads(l)
                except ValueError:
                    return "invalid JSON"
                t = d.get("type")
                p = d.get("payload")
                return f"{t}/{p.get('type')}" if isinstance(p, dict) and p.get("type") else str(t)
    return "?"


def _accounting(c):
    """Per session file: lines with an event, lines merged into one, lines with a diagnostic."""
    out = {}
    for f in c.files:
        by_event, merged = set(), set()
        for ev in c.events:
            src = ev.get("source") or {}
            if not _same_file(src.get("file", ""), f):
                continue
            by_event.add(src.get("line"))
            for m in ((ev.get("extra") or {}).get("merged_lines") or []):
                merged.add(m.get("line") if isinstance(m, dict) else m)
        diagnosed = set()
        for entry in c.report.get("files") or []:
            if _same_file(entry.get("file", ""), f):
                for d in entry.get("diagnostics") or []:
                    if isinstance(d, dict) and d.get("line") is not None:
                        diagnosed.add(d["line"])
        out[f] = (by_event, merged, diagnosed)
    return out


def _served_in_sessions(c):
    """Responses served to the session (and subagents) that the agent wrote down."""
    return [e for e in harness.logged_responses(c) if e["channel"] in ("main", "subagent", "compact")]


def _typed_messages(c):
    return [t["text"] for t in harness.typed_prompts(c.ledger) if t["kind"] == "message"]


def _visible_text(ev) -> str:
    return (ev["payload"].get("text") or "").strip()


_says = harness.says

# ---------------------------------------------------------------------------
# the checks


@runs
def test_agent_ran_the_scenario(ran):
    """Every agent process exited 0, and the model served exactly the scripted steps."""
    meta = ran["meta"]
    inv = meta.get("invocations") or []
    assert len(inv) == len(meta.get("typed") or []), f"not every invocation ran: {json.dumps(inv, indent=1)[-2000:]}"
    bad = [(i["index"], i["exit"], i["stderr_tail"][-800:]) for i in inv if i["exit"] != 0]
    assert not bad, f"agent exit status: {bad}"
    unscripted = [(e["channel"], e.get("last_user_text", "")[:120]) for e in ran["entries"] if e.get("unscripted")]
    assert not unscripted, f"requests beyond the script: {unscripted}"
    left = {k: v for k, v in (meta.get("remaining_steps") or {}).items() if v}
    assert not left, f"scripted steps never requested: {left}"


@cases
def test_convert_exit_status(case):
    """agentlog converts the files without reporting anything."""
    assert case.convert_rc == 0, f"agentlog convert exited {case.convert_rc}:\n{case.convert_stderr[-3000:]}"


@cases
def test_every_line_accounted_for(case):
    """Every non-empty line is an event's source line, a merged line, or a diagnostic (the guide, docs/src/promises.md)."""
    _skip_store(case, "a SQLite store has no lines (test_every_store_session_converted)")
    missing = []
    for f, (by_event, merged, diagnosed) in _accounting(case).items():
        for n in harness.record_lines(_agent(case), f):
            if n not in by_event and n not in merged and n not in diagnosed:
                missing.append(f"{f.name}:{n} ({_record_type(f, n)})")
    assert not missing, f"{len(missing)} lines not accounted for: {missing[:40]}"


@cases
def test_no_line_only_diagnosed(case):
    """Lines of a real agent's files map to events: none is only skipped with a diagnostic."""
    _skip_store(case, "a SQLite store has no lines (test_every_store_session_converted)")
    skipped = []
    for f, (by_event, merged, diagnosed) in _accounting(case).items():
        for n in sorted(diagnosed - by_event - merged):
            skipped.append(f"{f.name}:{n} ({_record_type(f, n)})")
    assert not skipped, f"{len(skipped)} lines skipped with a diagnostic: {skipped[:40]}"


@cases
def test_typed_prompts_are_user_messages(case):
    """Each typed prompt is a user message not flagged injected, and nothing else in the main thread is."""
    users = [ev for ev in harness.user_messages(case.events) if not ev.get("copied")]
    problems = []
    for t in _typed_messages(case):
        hits = [ev for ev in users if _says(ev, t)]
        if not hits:
            problems.append(f"typed prompt {t!r} is not a user message")
        elif all(ev.get("injected") for ev in hits):
            problems.append(f"typed prompt {t!r} is flagged injected (line {hits[0]['source']['line']}, "
                            f"{hits[0]['source'].get('record_type')})")
    typed = set(_typed_messages(case))
    extra = [ev for ev in users if _is_main_thread(ev) and not ev.get("injected")
             and not any(_says(ev, t) for t in typed)]
    for ev in extra:
        problems.append(f"user message not typed but not flagged injected: line {ev['source']['line']} "
                        f"({ev['source'].get('record_type')}): {_visible_text(ev)[:100]!r}")
    assert not problems, "\n".join(problems)


def _written_as_value(case, text: str) -> bool:
    """Whether a record of the session files holds ``text`` as a whole string value (or starts
    with it: ``/compact focus``), or inside Claude Code's ``<command-name>`` tag."""
    def walk(v):
        if isinstance(v, str):
            return v.strip() == text or v.startswith(text + " ") or f"<command-name>{text}</command-name>" in v
        if isinstance(v, dict):
            return any(walk(x) for x in v.values())
        if isinstance(v, list):
            return any(walk(x) for x in v)
        return False
    for f in case.files:
        for line in f.read_text(errors="replace").splitlines():
            try:
                if walk(json.loads(line)):
                    return True
            except ValueError:
                continue
    return False


@cases
def test_slash_commands_are_commands(case):
    """A typed slash command (/compact) is a command event, not a user message."""
    commands = [t["text"] for t in harness.typed_prompts(case.ledger) if t["kind"] == "command"]
    if not commands:
        pytest.skip("no slash command typed in this scenario")
    unwritten = [c for c in commands if not _written_as_value(case, c)]
    if unwritten:
        # Copilot CLI 1.0.102 writes session.compaction_start {trigger: "manual"}, not the command
        pytest.skip(f"the agent does not write the typed command {unwritten} into its session files")
    for cmd in commands:
        ev = [e for e in case.events if e["kind"] == "meta" and e["payload"]["meta_type"] == "command"
              and cmd in json.dumps(e["payload"].get("data"))]
        assert ev, f"{cmd} is not a command event"


@cases
def test_answers_and_reasoning(case):
    """Every answer text and reasoning text served (and logged) is an event with the same text."""
    problems = []
    for e in _served_in_sessions(case):
        r = e["response"]
        if e["channel"] == "compact":
            continue
        if r.get("text"):
            hits = [ev for ev in case.events if ev["kind"] == "message" and ev["payload"]["role"] == "assistant"
                    and _visible_text(ev) == r["text"].strip()]
            if not hits:
                problems.append(f"answer {r['text']!r} ({e['channel']} step {e['step']}) is not an assistant message")
        thinking = r.get("thinking_sent", r.get("thinking"))
        if thinking:
            hits = [ev for ev in case.events if ev["kind"] == "reasoning"
                    and (ev["payload"].get("text") or "").strip() == thinking.strip()]
            if not hits:
                problems.append(f"reasoning {thinking!r} is not a reasoning event")
    assert not problems, "\n".join(problems)


# The name under which OpenCode stores a call of a tool it did not offer (the arguments are lost:
# its input is the tool's name and an error).
INVALID_TOOL = "invalid"


@cases
def test_tool_calls_and_outputs(case):
    """Each tool call served is a tool_call with its id, name and input; its output says what the command did."""
    problems = []
    for e in _served_in_sessions(case):
        for call in e["response"].get("tool_calls") or []:
            call_id = harness.logged_call_id(_agent(case), call)
            calls = [ev for ev in case.events if ev["kind"] == "tool_call" and ev["payload"].get("call_id") == call_id]
            if not calls:
                problems.append(f"tool call {call_id} ({call['name']}) missing")
                continue
            p = calls[0]["payload"]
            ab = call.get("abstract") or {}
            if not (ab.get("unknown_tool") and p.get("name") == INVALID_TOOL):
                # (OpenCode stores the call of an unknown tool as `invalid`, without its arguments)
                if p.get("name") != call["name"]:
                    problems.append(f"tool call {call['id']}: name {p.get('name')!r}, served {call['name']!r}")
                if p.get("input") != call["input"]:
                    problems.append(f"tool call {call['id']}: input {p.get('input')!r}, served {call['input']!r}")
            outs = [ev for ev in case.events if ev["kind"] == "tool_output" and ev["payload"].get("call_id") == call_id]
            if not outs:
                problems.append(f"tool output of {call['id']} ({call['name']}) missing")
                continue
            o = outs[0]["payload"]
            if ab.get("tool") == "shell":
                if ab["expect_output"] not in (o.get("text") or ""):
                    problems.append(f"output of {ab['command']!r}: {o.get('text')!r} lacks {ab['expect_output']!r}")
                if o.get("failed") is not ab["expect_failed"]:
                    problems.append(f"output of {ab['command']!r}: failed={o.get('failed')!r}, "
                                    f"the command {'failed' if ab['expect_failed'] else 'succeeded'}")
                # the SQLite stores keep every command's exit status (metadata.exit)
                known = (ab["expect_exit_code"],) if _store(case) else (None, ab["expect_exit_code"])
                if o.get("exit_code") not in known:
                    problems.append(f"output of {ab['command']!r}: exit_code={o.get('exit_code')!r}, "
                                    f"was {ab['expect_exit_code']}")
            elif "expect_output" in ab or "expect_failed" in ab:
                # a named call with what its output should say (tool-error)
                if ab.get("expect_output", "").lower() not in (o.get("text") or "").lower():
                    problems.append(f"output of {call['name']} {call['id']}: {o.get('text')!r:.200} lacks "
                                    f"{ab['expect_output']!r}")
                if "expect_failed" in ab and o.get("failed") is not ab["expect_failed"]:
                    problems.append(f"output of {call['name']} {call['id']}: failed={o.get('failed')!r}, "
                                    f"the tool {'failed' if ab['expect_failed'] else 'succeeded'}")
            elif o.get("failed"):
                problems.append(f"output of {call['name']} {call['id']} is marked failed: {o.get('text')!r:.200}")
    assert not problems, "\n".join(problems)


@cases
def test_failed_command_exit_code(case):
    """A command that failed (`ls /nonexistent`, exit 2) is a failed tool_output with its exit code,
    where the agent keeps it (the SQLite stores do)."""
    if not _store(case):
        pytest.skip("checked with the other tool outputs (test_tool_calls_and_outputs)")
    failing = [c for e in _served_in_sessions(case) for c in e["response"].get("tool_calls") or []
               if (c.get("abstract") or {}).get("tool") == "shell" and c["abstract"]["expect_failed"]]
    if not failing:
        pytest.skip("no failing command in this scenario")
    for call in failing:
        outs = [ev["payload"] for ev in case.events if ev["kind"] == "tool_output"
                and ev["payload"].get("call_id") == harness.logged_call_id(_agent(case), call)]
        assert outs, f"no tool output for {call['id']} ({call['abstract']['command']})"
        assert (outs[0].get("exit_code"), outs[0].get("failed")) == (call["abstract"]["expect_exit_code"], True), \
            f"{call['abstract']['command']}: exit_code={outs[0].get('exit_code')!r}, failed={outs[0].get('failed')!r}"


def _usage_fields(u: dict, expected: dict) -> dict:
    return {k: u.get(k) for k in expected}


def _pair_usage(case):
    """Pairs logged responses with usage events: by response id, else (OpenCode, Kilo CLI) by the
    counts, which the server makes distinct for every response, else in order within a thread.

    Returns (pairs, responses left without a usage event, usage events left over)."""
    logged = _served_in_sessions(case)
    summed = {ev["id"] for ev in harness.side_usage(case)[1]}
    events = [ev for ev in harness.usage_events(case.events) if ev["id"] not in summed]
    pairs, left = [], []
    unmatched = list(events)
    for e in logged:
        rid = e["response"]["id"]
        hits = [ev for ev in unmatched if (ev["payload"]["usage"] or {}).get("response_id") == rid
                or ev.get("response_id") == rid]
        if hits:
            pairs.append((e, hits[0]))
            unmatched.remove(hits[0])
        else:
            left.append(e)
    if _store(case):
        # the stores keep no response id, and usage events do not come in serving order across
        # sessions (the subagent's child session; OpenCode's title request served beside the first
        # response); what is left after this is paired in order below, to show the differences
        left = _pair_by_counts(case, left, unmatched, pairs)
    # the rest in order, thread by thread (a usage event's session_id is the thread that wrote it);
    # where the requests name no thread (Gemini CLI, Copilot CLI), the main thread's events for the
    # main channel and the subagents' for the subagent channel
    by_thread = {}
    for e in left:
        by_thread.setdefault(e.get("thread_id") or ("channel", e["channel"]), []).append(e)
    # (a usage event may carry the agent's own message id, as Copilot CLI 1.0.20's messageId: not a
    # response id the server served)
    served_ids = {e["response"]["id"] for e in harness.served_responses(case.ledger)}
    still = []
    for thread, responses in by_thread.items():
        no_id = [ev for ev in unmatched if (ev["payload"]["usage"] or {}).get("response_id") not in served_ids
                 and not _shutdown_remainder(ev)]
        if isinstance(thread, tuple):
            candidates = [ev for ev in no_id if _is_main_thread(ev) == (thread[1] != "subagent")]
        else:
            candidates = [ev for ev in no_id if ev.get("session_id") == thread]
        for e, ev in zip(responses, candidates):
            pairs.append((e, ev))
            unmatched.remove(ev)
        still += responses[len(candidates):]
    return pairs, still, unmatched


def _pair_by_counts(case, responses, unmatched, pairs):
    """Pairs each response with the usage event that has the counts it served (taken out of
    ``unmatched``, added to ``pairs``); returns the responses without one."""
    left = []
    for e in responses:
        want = harness.expected_usage(_agent(case), e)
        hits = [ev for ev in unmatched if _usage_fields(ev["payload"]["usage"] or {}, want) == want]
        if hits:
            pairs.append((e, hits[0]))
            unmatched.remove(hits[0])
        else:
            left.append(e)
    return left


def _shutdown_remainder(ev) -> bool:
    """A Copilot CLI `session.shutdown` usage event: what the run's totals hold beyond the messages."""
    return bool((ev.get("extra") or {}).get("shutdown_remainder"))


def _records_of_type(case, record_type: str) -> bool:
    for f in case.files:
        with open(f, "rb") as fh:
            if any(f'"type":"{record_type}"'.encode() in l.replace(b" ", b"") for l in fh):
                return True
    return False


def _per_response_keys(case) -> list[str] | None:
    """The counts a session file gives per response; None when all of them (harness.usage_keys).

    Copilot CLI versions without `session.usage_record` give only `outputTokens` per
    `assistant.message`; input, cache and reasoning exist only as `session.shutdown` totals
    (checked by test_usage_totals)."""
    if _agent(case) == "copilot" and not _records_of_type(case, "session.usage_record"):
        return ["output_tokens"]
    return None


def _total_keys(case) -> list[str]:
    """The counts the session files hold at all: Copilot CLI 1.0.20 and older write no
    `reasoningTokens` (nor any reasoning text for a `reasoning_content` delta)."""
    keys = harness.usage_keys(_agent(case))
    if _agent(case) == "copilot" and not any(b"reasoningTokens" in f.read_bytes() for f in case.files):
        keys.remove("reasoning_tokens")
    return keys


@cases
def test_usage_per_response(case):
    """One usage event per logged response, with the counts served (and no other usage events)."""
    agent = _agent(case)
    if not getattr(harness.ADAPTERS[agent], "usage_per_response", True):
        pytest.skip("the agent keeps only the session's totals (checked by test_usage_totals)")
    pairs, left, unmatched = _pair_usage(case)
    keys = _per_response_keys(case)
    if keys:
        # the run's totals come from session.shutdown, not per response
        unmatched = [ev for ev in unmatched if not _shutdown_remainder(ev)]
    problems = []
    for e, ev in pairs:
        want = harness.expected_usage(agent, e)
        if keys:
            want = {k: want[k] for k in keys}
        got = _usage_fields(ev["payload"]["usage"] or {}, want)
        if got != want:
            problems.append(f"response {e['response']['id']} ({e['channel']} step {e['step']}): usage {got}, "
                            f"served {want} (line {ev['source']['line']}, {ev['source'].get('record_type')})")
    for e in left:
        want = harness.expected_usage(agent, e)
        problems.append(f"no usage event for response {e['response']['id']} ({e['channel']} step {e['step']}); "
                        f"want {({k: want[k] for k in keys} if keys else want)}")
    for ev in unmatched:
        u = ev["payload"]["usage"] or {}
        problems.append(f"usage event not matching a logged response: line {ev['source']['line']} "
                        f"({ev['source'].get('record_type')}) response_id={u.get('response_id')!r} "
                        f"in={u.get('input_tokens')} out={u.get('output_tokens')}")
    # side requests the files hold summed on a record of their own (harness.side_usage)
    side, summed = harness.side_usage(case)
    for k in harness.usage_keys(agent):
        want = sum(harness.expected_usage(agent, e).get(k) or 0 for e in side)
        got = sum((ev["payload"]["usage"] or {}).get(k) or 0 for ev in summed)
        if got != want:
            problems.append(f"summed usage of {len(side)} side responses: {k} {got}, served {want}")
    assert not problems, "\n".join(problems)


@cases
def test_usage_names_its_response(case):
    """A usage event carries the id of its response (Claude Code `message.id`, Codex
    `token_usage_record.response_id`, Copilot CLI `apiCallId`), since the session file names it."""
    _skip_store(case, "OpenCode and Kilo CLI do not store the API's response id")
    raw = "\n".join(f.read_text(errors="replace") for f in case.files)
    if not any(e["response"]["id"] in raw for e in _served_in_sessions(case)):
        # Gemini CLI (responseId), Copilot CLI 1.0.20 and older (apiCallId)
        pytest.skip("the agent does not write the API's response id into its session files")
    pairs, _, _ = _pair_usage(case)
    missing = [f"line {ev['source']['line']} ({ev['source'].get('record_type')}): response_id "
               f"{(ev['payload']['usage'] or {}).get('response_id')!r}, the file names {e['response']['id']!r}"
               for e, ev in pairs if (ev["payload"]["usage"] or {}).get("response_id") != e["response"]["id"]]
    assert not missing, "\n".join(missing)


@cases
def test_usage_totals(case):
    """The usage events add up to what the server served for the logged responses."""
    agent = _agent(case)
    logged = _served_in_sessions(case) + harness.side_usage(case)[0]
    keys = _total_keys(case)
    want = {k: sum(harness.expected_usage(agent, e).get(k, 0) for e in logged) for k in keys}
    got = {k: sum((ev["payload"]["usage"] or {}).get(k) or 0 for ev in harness.usage_events(case.events)) for k in keys}
    assert got == want, f"usage totals {got}, served {want} over {len(logged)} logged responses"


@cases
def test_no_unknown_records(case):
    """No record is left as meta `unknown`."""
    unknown = [ev for ev in case.events if ev["kind"] == "meta" and ev["payload"]["meta_type"] == "unknown"]
    types = sorted({ev["source"].get("record_type") or "?" for ev in unknown})
    assert not unknown, f"{len(unknown)} unknown events, record types: {types}"


def _holds(doc: str, t: str) -> bool:
    return any(x in doc or html.escape(x) in doc or html.escape(x, quote=False) in doc for x in (t, t.strip()))


def _holds_rendered(doc: str, t: str) -> bool:
    """An answer of several lines of Markdown (Aider's, with code blocks), rendered in HTML: each
    line but the code fences is there."""
    lines = [line for line in t.strip().splitlines() if line.strip() and not line.startswith("```")]
    return len(lines) > 1 and all(_holds(doc, line) for line in lines)


@cases
def test_transcripts_hold_prompts_and_answers(case, tmp_path):
    """--to markdown and --to html contain every typed prompt and every answer."""
    texts = _typed_messages(case) + [e["response"]["text"] for e in _served_in_sessions(case)
                                     if e["channel"] != "compact" and e["response"].get("text")]
    roots = [r for r in harness.ADAPTERS[_agent(case)].session_roots(case.scen_dir / "home") if r.exists()]
    problems = []
    for fmt in ("markdown", "html"):
        out = tmp_path / f"t.{'md' if fmt == 'markdown' else 'html'}"
        p = harness.agentlog("convert", *roots, "--to", fmt, "-o", out, "-q")
        if p.returncode not in (0, 1) or not out.exists():
            problems.append(f"--to {fmt} exited {p.returncode}: {p.stderr[-500:]}")
            continue
        doc = out.read_text()
        for t in texts:
            if not _holds(doc, t) and not (fmt == "html" and _holds_rendered(doc, t)):
                problems.append(f"--to {fmt} lacks {t!r}")
    assert not problems, "\n".join(problems)


@cases
def test_unified_output_validates(case):
    """agentlog validate accepts the unified output."""
    assert case.unified.exists(), "no unified output"
    p = harness.agentlog("validate", case.unified)
    assert p.returncode == 0, f"validate exited {p.returncode}:\n{(p.stdout + p.stderr)[-2000:]}"


@cases
def test_scenario_specifics(case):
    """What each scenario is about shows in the events: an image part, a compaction, a subagent thread."""
    s = _scenario(case)
    if s == "image":
        parts = [pt for ev in harness.user_messages(case.events) for pt in ev["payload"].get("parts") or []
                 if pt.get("type") == "image"]
        assert parts, "the typed prompt's image is not an image part"
    elif s == "compaction":
        if _agent(case) == "gemini" and "<state_snapshot>" not in "".join(f.read_text(errors="replace") for f in case.files):
            pytest.skip("Gemini CLI does not write its chat compression into the session file (the ledger has "
                        "the summary and verification requests; the resumed history is written unchanged)")
        comp = [ev for ev in case.events if ev["kind"] == "meta" and ev["payload"]["meta_type"] == "compaction"]
        assert comp, "no compaction event"
    elif s in ("subagent", "subagent-background"):
        sub = [ev for ev in case.events if ev.get("is_sidechain") or ev.get("agent_id") or ev.get("parent_session_id")]
        assert sub, "no event of the subagent (is_sidechain / agent_id / parent_session_id)"
        if _store(case):
            _check_child_session(case)
    elif s == "api-error":
        errs = [e for e in case.ledger["entries"] if (e.get("response") or {}).get("status", 200) >= 500]
        assert errs, "the server served no error"
    elif s.endswith("-anthropic"):
        apis = {e.get("api") for e in harness.served_responses(case.ledger)}
        assert apis == {"anthropic-messages"}, f"responses served on {apis}"
    else:
        pytest.skip("nothing specific to check")


def _check_child_session(case):
    """OpenCode's and Kilo CLI's subagent runs in a child session of the store (`parent_id`): every
    event of it names the session of the typed prompt as its parent."""
    marker = harness.scenario(_agent(case), _scenario(case)).script["subagent_marker"]
    typed = _typed_messages(case)
    main = {ev["session_id"] for ev in harness.user_messages(case.events) if any(_says(ev, t) for t in typed)}
    child = {ev["session_id"] for ev in harness.user_messages(case.events) if marker in _visible_text(ev)}
    assert len(main) == 1 and len(child) == 1 and main != child, \
        f"sessions of the typed prompt {main}, of the subagent's prompt {child}"
    events = [ev for ev in case.events if ev["session_id"] in child]
    orphans = [ev for ev in events if ev.get("parent_session_id") not in main]
    assert not orphans, (f"{len(orphans)} of the child session's {len(events)} events do not name {main} as their "
                         f"parent: {sorted({(ev['kind'], ev.get('parent_session_id')) for ev in orphans})}")
    in_main = [ev for ev in case.events if ev["session_id"] in main and ev.get("parent_session_id")]
    assert not in_main, f"{len(in_main)} events of the main session name a parent session"


@cases
def test_events_name_the_agent(case):
    """Every event names the agent that wrote the files (`agent`: claude-code, codex, gemini-cli,
    copilot-cli, opencode, kilo)."""
    want = harness.AGENTS[_agent(case)].session_kind
    got = sorted({ev["agent"] for ev in case.events})
    assert got == [want], f"agents {got}, want {want!r}"


@cases
def test_every_store_session_converted(case):
    """Every session of an OpenCode or Kilo CLI store (its `session` table, the subagent's child
    session included) is a session of the output, and no other."""
    if not _store(case):
        pytest.skip("not a SQLite store")
    stored = {r[0] for db in case.files for r in harness.store_query(db, "SELECT id FROM session")}
    converted = {ev["session_id"] for ev in case.events}
    assert stored, "the store holds no session"
    assert converted == stored, f"sessions converted {sorted(converted)}, stored {sorted(stored)}"


def _store_digests(case, digests: dict, shm: bool) -> dict:
    """The digests of the store's database and -wal, or of its -shm (None where the file is missing)."""
    names = [n for db in case.files for n in ([db.name + "-shm"] if shm else [db.name, db.name + "-wal"])]
    return {n: digests.get(n) for n in names}


@cases
def test_store_left_unchanged(case):
    """Converting a store leaves its database and -wal as they were: no checkpoint, no write, no
    file made or removed beside them."""
    if not _store(case):
        pytest.skip("not a SQLite store")
    assert case.store_before, "no store files"
    before = _store_digests(case, case.store_before, shm=False)
    assert _store_digests(case, case.store_after, shm=False) == before, \
        f"before {before}, after conversion {_store_digests(case, case.store_after, shm=False)}"
    assert sorted(case.store_after) == sorted(case.store_before), \
        f"files before {sorted(case.store_before)}, after {sorted(case.store_after)}"
    beside = sorted(f.name for db in case.files for f in db.parent.iterdir()
                    if f.name.startswith(db.name) and f.name not in case.store_before)
    assert not beside, f"files beside the store after conversion: {beside}"


@cases
def test_store_wal_index_left_unchanged(case):
    """Converting a store leaves its -shm (the WAL index) as it was too, so that a store kept as a
    sample (corpus/recorded) stays as the agent left it: a reader that opens the store in place
    with SQLite writes its read marks into the -shm unless it opens that index read-only."""
    if not _store(case):
        pytest.skip("not a SQLite store")
    before = _store_digests(case, case.store_before, shm=True)
    if not any(before.values()):
        pytest.skip("the store has no -shm")
    assert _store_digests(case, case.store_after, shm=True) == before, \
        f"before {before}, after conversion {_store_digests(case, case.store_after, shm=True)}"
