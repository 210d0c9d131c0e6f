"""Sessions handed over between agents with ``agentlog handoff``, resumed by the real agents.

Each case is one pair SOURCE:TARGET and scenario run by ``handoff.py``: the source agent's session
(written by the real source agent against the scripted server) is handed over, and the target agent
at its pinned version resumes it with a new prompt. The checks: the target's first request to the
model holds every earlier prompt, answer, tool call and output, in order; the new turn goes into
the same session file; agentlog reads that file back with the source's conversation intact; and,
for one agent to itself, the request equals the one the agent makes resuming the original file.

    python3 -m pytest tests/agents/test_handoff.py                 # runs the agents first
    AGENTLOG_HANDOFF_OUT=DIR python3 -m pytest tests/agents/test_handoff.py   # checks a prepared run
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import handoff  # noqa: E402
import harness  # noqa: E402

PREPARED = os.environ.get("AGENTLOG_HANDOFF_OUT")
CASES = handoff.cases()


_skip = harness.skip_or_fail


@pytest.fixture(scope="session")
def out_dir(tmp_path_factory) -> Path:
    if not harness.agentlog_bin().exists():
        _skip(f"agentlog binary not found at {harness.agentlog_bin()}")
    if PREPARED:
        return Path(PREPARED)
    out = tmp_path_factory.mktemp("handoff")
    p = subprocess.run([sys.executable, str(HERE / "handoff.py"), "run", "--src", str(out / "src"),
                        "--out", str(out)], capture_output=True, text=True, timeout=2400)
    (out / "handoff-output.txt").write_text(p.stdout + p.stderr)
    if not list(out.glob("*/*/handoff.json")):
        _skip("no handoff ran (agents not installed?):\n" + (p.stdout + p.stderr)[-3000:])
    return out


def _case(out_dir: Path, pair: str, scenario: str) -> tuple[Path, dict]:
    source, target = pair.split(":")
    d = out_dir / f"{source}-to-{target}" / scenario
    if not (d / "handoff.json").exists():
        _skip(f"{pair} {scenario} was not run")
    return d, json.loads((d / "handoff.json").read_text())


def strings(value) -> list[str]:
    """The strings of a JSON value, in order (an argument string holding JSON: its strings too)."""
    if isinstance(value, str):
        try:
            inner = json.loads(value)
        except ValueError:
            return [value]
        return strings(inner) if isinstance(inner, (dict, list)) else [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def first_request(d: Path) -> dict:
    requests = sorted((d / "requests").glob("*.json"))
    main = [json.loads(r.read_text()) for r in requests]
    main = [r for r in main if "messages" in r or "input" in r]
    assert main, f"no request to the model in {d}"
    return main[0]


def conversation(request: dict) -> list:
    return request.get("messages") or request.get("input") or []


def holds_in_order(request: dict, said: list[str]) -> None:
    """Asserts that the request's conversation holds each of ``said``, in that order."""
    text = "\n".join(strings(conversation(request)))
    at = 0
    for s in said:
        found = text.find(s, at)
        assert found >= 0, f"{s!r} missing (or out of order) in the first request after {text[max(0, at - 200):at]!r}"
        at = found + len(s)


def earlier(scen_dir: Path) -> list[str]:
    """What the source session said, in order, from its ledger: each prompt typed, then each
    served response's text, and each of its tool calls' command and expected output."""
    ledger = json.loads((scen_dir / "ledger.json").read_text())
    typed = [t["text"] for t in ledger["meta"]["typed"] if t.get("kind", "message") == "message"]
    said: list[str] = []
    for e in ledger["entries"]:
        response = e.get("response") or {}
        if e.get("channel") != "main" or response.get("status") != 200:
            continue
        for prompt in typed:
            if prompt not in said and prompt == e.get("last_user_text"):
                said.append(prompt)
        if response.get("text"):
            said.append(response["text"])
        for call in response.get("tool_calls") or []:
            abstract = call.get("abstract") or {}
            if abstract.get("command"):
                said.append(abstract["command"])
            if abstract.get("expect_output"):
                said.append(abstract["expect_output"])
    return said


@pytest.mark.parametrize("pair,scenario", CASES, ids=[f"{p}-{s}" for p, s in CASES])
def test_the_target_resumes_with_the_whole_conversation(out_dir, pair, scenario):
    d, rec = _case(out_dir, pair, scenario)
    assert rec["handoff"]["exit"] == 0, rec["handoff"]["stderr"]
    assert rec["resume"]["exit"] == 0, rec["resume"]["stderr_tail"]
    request = first_request(d)
    if scenario == "image":
        # the picture the user attached, inline (a PNG's base64 starts so)
        assert "iVBORw0KGgo" in json.dumps(conversation(request))
    holds_in_order(request, earlier(Path(rec["source_dir"])) + [handoff.PROMPT])


def session_files(target: str, home: Path) -> list[Path]:
    if target == "claude":
        return [f for f in (home / ".claude" / "projects").glob("*/*.jsonl")]
    return list((home / ".codex" / "sessions").rglob("rollout-*.jsonl"))


@pytest.mark.parametrize("pair,scenario", CASES, ids=[f"{p}-{s}" for p, s in CASES])
def test_the_new_turn_goes_into_the_handed_over_session(out_dir, pair, scenario):
    d, rec = _case(out_dir, pair, scenario)
    files = session_files(rec["target"], d / "home")
    assert len(files) == 1, files
    assert rec["written_session"] in files[0].name
    body = files[0].read_text()
    assert handoff.PROMPT in body and "HANDOFF-OK" in body


def said_in(events: list[dict]) -> list[str]:
    return [e["payload"]["text"] for e in events
            if e["kind"] == "message" and e["payload"]["role"] in ("user", "assistant") and not e["injected"]
            and not e.get("agent_id") and not e["rolled_back"] and e["payload"]["text"]
            and not e["payload"]["text"].startswith(("[Called the ", "[Output of `"))]


def converted(*inputs) -> tuple[list[dict], str]:
    p = harness.agentlog("convert", *inputs, "--to", "unified", "--color", "never")
    assert p.returncode == 0, p.stderr
    return [json.loads(line) for line in p.stdout.splitlines()], p.stderr


@pytest.mark.parametrize("pair,scenario", CASES, ids=[f"{p}-{s}" for p, s in CASES])
def test_agentlog_reads_the_resumed_file_with_the_source_conversation(out_dir, pair, scenario):
    d, rec = _case(out_dir, pair, scenario)
    source_events, _ = converted(*handoff.source_inputs(rec["source"], Path(rec["source_dir"])))
    source_events = [e for e in source_events if e["session_id"] == rec["source_session"]]
    [resumed] = session_files(rec["target"], d / "home")
    events, _ = converted(resumed)
    unknown = [e for e in events if e["kind"] == "meta" and e["payload"]["meta_type"] == "unknown"]
    assert not unknown, unknown[:1]
    # the source's prompts and answers, then the new turn
    assert said_in(events) == said_in(source_events) + [handoff.PROMPT, handoff.ANSWER]
    calls = lambda evs: [e for e in evs if e["kind"] == "tool_call" and not e.get("agent_id")]  # noqa: E731
    assert len(calls(events)) == len(calls(source_events))
    # usage: the resumed turn's own response, never the source's again
    usage = [e for e in events if e["kind"] == "meta" and e["payload"]["meta_type"] == "usage" and not e["copied"]]
    assert len(usage) == 1, usage


@pytest.mark.parametrize("agent,scenario", [(a, s) for a in ("claude", "codex") for s in handoff.SCENARIOS])
def test_one_agent_sends_the_same_as_for_its_own_file(out_dir, agent, scenario):
    d, rec = _case(out_dir, f"{agent}:{agent}", scenario)
    assert rec["original"]["exit"] == 0, rec["original"]["stderr_tail"]
    ours, theirs = first_request(d), first_request(d / "original")

    def normal(request: dict, home: Path) -> list:
        # the two runs have HOMEs of their own, which Codex names in the context it adds
        items = json.loads(json.dumps(conversation(request)).replace(str(home), "<HOME>"))
        for item in items:
            # ids Codex makes for the context it adds at each start, and argument strings, which
            # agentlog keeps as JSON values (the same value, its spacing may differ)
            if item.get("role") in ("developer", "user") and "id" in item and not item.get("status"):
                item.pop("id")
            if isinstance(item.get("arguments"), str):
                item["arguments"] = json.loads(item["arguments"])
            # Codex wraps an attached image in `<image name=… path=…>` … `</image>` texts and asks
            # for `detail: high`; agentlog keeps the image and the prompt, not these (docs/src/handoff.md)
            if isinstance(item.get("content"), list):
                item["content"] = sorted(
                    ({k: v for k, v in c.items() if k != "detail"} for c in item["content"]
                     if not (c.get("type") == "input_text" and c.get("text", "").startswith(("<image name=", "</image>")))),
                    key=lambda c: c.get("type") != "input_image")
        return items

    assert normal(ours, d / "home") == normal(theirs, d / "original" / "home")
    for key in ("system", "instructions", "tools"):
        assert ours.get(key) == theirs.get(key), key


def test_register_makes_the_handed_over_session_the_last_one_codex_offers(out_dir):
    d = out_dir / "claude-to-codex-register" / "tools"
    if not (d / "handoff.json").exists():
        _skip("the --register run was not made")
    rec = json.loads((d / "handoff.json").read_text())
    assert rec["native"]["exit"] == 0 and rec["handoff"]["exit"] == 0, rec["handoff"]["stderr"]
    # one row added, the others as they were
    before, after = rec["index_before"], rec["index_after"]
    assert len(before) == 1 and len(after) == 2
    assert [r for r in after if r[0] != rec["written_session"]] == before
    # `codex exec resume --last` continues the handed-over session, not Codex's own
    assert rec["resume"]["exit"] == 0, rec["resume"]["stderr_tail"]
    request = first_request(d)
    assert "[native]" not in "\n".join(strings(conversation(request)))
    holds_in_order(request, earlier(Path(rec["source_dir"])) + [handoff.PROMPT])
