"""Claude Code calling ``agentlog mcp``'s ``search`` tool, run offline by ``mcp.py``.

The scripted model asks for ``mcp__agentlog__search`` with a word of the sample sessions; Claude Code
(pinned version) calls agentlog's MCP stdio server and sends the result back. The checks: the next
request to the model carries a ``tool_result`` for that call holding the JSON ``agentlog search
--json WORD DIR`` prints; Claude Code's session file records the call and its result; ``agentlog
convert`` of that file gives a ``tool_call`` named ``mcp__agentlog__search`` and its ``tool_output``
with the result.

    python3 -m pytest tests/agents/test_mcp.py                         # runs Claude Code first
    AGENTLOG_MCP_OUT=DIR python3 -m pytest tests/agents/test_mcp.py    # checks a prepared run

Without ``AGENTLOG_MCP_OUT`` the tests skip (fail with ``CI=true``) when the agentlog binary is
missing or has no ``mcp`` subcommand, or when Claude Code could not be run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402

# tests/agents/mcp.py, under a name of its own (``mcp`` is also the MCP SDK's package)
_spec = importlib.util.spec_from_file_location("agentlog_mcp_run", HERE / "mcp.py")
mcp_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mcp_run)

PREPARED = os.environ.get("AGENTLOG_MCP_OUT")


_skip = harness.skip_or_fail


@pytest.fixture(scope="session")
def out_dir(tmp_path_factory) -> Path:
    b = harness.agentlog_bin()
    if not b.exists():
        _skip(f"agentlog binary not found at {b}")
    if PREPARED:
        out = Path(PREPARED)
    else:
        if not mcp_run.has_mcp(b):
            _skip(f"{b} has no `mcp` subcommand")
        out = tmp_path_factory.mktemp("mcp")
        p = subprocess.run([sys.executable, str(HERE / "mcp.py"), "run", "--out", str(out)],
                           capture_output=True, text=True, timeout=900)
        (out / "mcp-output.txt").write_text(p.stdout + p.stderr)
        if not (out / "mcp.json").exists() or not list(out.glob("claude-*/*/ledger.json")):
            _skip("Claude Code did not run (not installed?):\n" + (p.stdout + p.stderr)[-3000:])
    if not (out / "mcp.json").exists():
        _skip(f"no mcp.json in {out}")
    return out


@pytest.fixture(scope="session")
def record(out_dir) -> dict:
    return json.loads((out_dir / "mcp.json").read_text())


@pytest.fixture(scope="session")
def ledger(record) -> dict:
    if not record.get("scenario_dir"):
        pytest.fail(f"the run did not start Claude Code: {record.get('status')}")
    return harness.load_ledger(Path(record["scenario_dir"]))


@pytest.fixture(scope="session")
def expected(record) -> dict:
    """What ``agentlog search --json WORD DIR`` printed."""
    search = record["search"]
    assert search["exit"] == 0, search["stderr"]
    assert isinstance(search["json"], dict), search["stdout"][:1000]
    return search["json"]


def main_requests(ledger: dict) -> list[dict]:
    return [e for e in ledger["entries"] if e["channel"] == "main"]


@pytest.fixture(scope="session")
def call(ledger) -> dict:
    """The tool call the model served in its first answer."""
    first = main_requests(ledger)[0]
    [c] = first["response"]["tool_calls"]
    return c


def session_ids(result: dict) -> list[str]:
    return [s["session_id"] for s in result["sessions"]]


def as_search_json(text: str) -> dict:
    """A tool result's text, parsed: the JSON of ``agentlog search --json``."""
    try:
        value = json.loads(text)
    except ValueError:
        pytest.fail(f"the tool result is not JSON: {text[:500]!r}")
    assert isinstance(value, dict) and "sessions" in value, text[:500]
    return value


def test_the_search_finds_the_word_in_the_sample_sessions(record, expected):
    assert expected["query"] == record["word"]
    assert expected["sessions_matched"] == len(expected["sessions"]) >= 2
    assert all(s["hits"] for s in expected["sessions"])


def test_claude_code_ran_the_script_through(record, ledger):
    assert record["status"] == "ok", record["status"]
    [inv] = ledger["meta"]["invocations"]
    assert inv["exit"] == 0, inv["stderr_tail"] or inv["stdout_tail"]
    assert not [e for e in ledger["entries"] if e.get("unscripted")]
    assert not any(ledger["meta"]["remaining_steps"].values()), ledger["meta"]["remaining_steps"]
    # the last answer is Claude Code's result (--output-format json)
    assert '"result":' + json.dumps(main_requests(ledger)[-1]["response"]["text"]) in inv["stdout_tail"]


def test_the_requests_offer_agentlogs_tools(ledger):
    # no built-in tools (--tools ""), only the MCP server of --mcp-config (--strict-mcp-config)
    for e in main_requests(ledger):
        assert mcp_run.TOOL in e["tools_offered"], e["tools_offered"]
        assert all(t.startswith(f"mcp__{mcp_run.SERVER_NAME}__") for t in e["tools_offered"]), e["tools_offered"]


def test_the_model_asked_for_the_search(record, call):
    assert call["name"] == mcp_run.TOOL
    assert call["input"] == {"query": record["word"]}


def is_reminder(text: str) -> bool:
    return text.lstrip().startswith("<system-reminder>")


@pytest.fixture(scope="session")
def sent_result(record, call) -> dict:
    """The ``tool_result`` block for the call in the request body that sent it back (``requests/``):
    Claude Code adds a ``<system-reminder>`` text block of its own to a tool result's content."""
    found = []
    for f in sorted((Path(record["scenario_dir"]) / "requests").glob("*.json")):
        body = json.loads(f.read_text())
        last = (body.get("messages") or [{}])[-1]
        if last.get("role") == "user" and isinstance(last.get("content"), list):
            found += [b for b in last["content"] if b.get("type") == "tool_result" and b.get("tool_use_id") == call["id"]]
    assert len(found) == 1, found
    return found[0]


def search_text(content) -> str:
    """The one text block of a tool result's content that is not a reminder of Claude Code's."""
    if isinstance(content, str):
        return content
    rest = [c for c in content if not (c.get("type") == "text" and is_reminder(c["text"]))]
    assert len(rest) == 1 and rest[0].get("type") == "text", content
    return rest[0]["text"]


def test_the_next_request_carries_the_search_result(ledger, call, expected, sent_result):
    requests = main_requests(ledger)
    assert len(requests) == 2, [e["step"] for e in requests]
    [result] = requests[1]["tool_results"]
    assert result["tool_use_id"] == call["id"]
    assert not result["is_error"], result["content"][:1000]
    assert not sent_result.get("is_error")
    got = as_search_json(search_text(sent_result["content"]))
    assert got["query"] == expected["query"]
    assert got["sessions_matched"] == expected["sessions_matched"]
    assert session_ids(got) == session_ids(expected)
    # the ledger has the text blocks joined, the search's JSON first
    assert result["content"].startswith(search_text(sent_result["content"]))


def test_the_search_result_is_what_search_json_prints(expected, sent_result):
    assert as_search_json(search_text(sent_result["content"])) == expected


def session_file(record) -> Path:
    files = [Path(record["scenario_dir"]) / f for f in record["files"]]
    assert len(files) == 1, files
    return files[0]


def test_the_session_file_records_the_call_and_its_result(record, call, expected):
    records = [json.loads(line) for line in session_file(record).read_text().splitlines() if line.strip()]
    uses = [b for r in records if r.get("type") == "assistant" for b in r["message"]["content"]
            if b.get("type") == "tool_use"]
    assert [(b["id"], b["name"], b["input"]) for b in uses] == [(call["id"], mcp_run.TOOL, call["input"])]
    results = [(r, b) for r in records if r.get("type") == "user" and isinstance(r["message"]["content"], list)
               for b in r["message"]["content"] if b.get("type") == "tool_result"]
    assert len(results) == 1, results
    r, block = results[0]
    assert block["tool_use_id"] == call["id"] and not block.get("is_error")
    # the MCP result's content blocks as they came: one text block with the JSON
    # (the reminder Claude Code adds to the content it sends is not written here: it is an attachment)
    content = block["content"]
    texts = [content] if isinstance(content, str) else [c["text"] for c in content if c.get("type") == "text"]
    assert len(texts) == 1 and not is_reminder(texts[0]), content
    assert as_search_json(texts[0]) == expected
    # and the same once more as the record's toolUseResult
    assert r.get("toolUseResult") in (content, texts[0]), r.get("toolUseResult")


@pytest.fixture(scope="session")
def events(record) -> list[dict]:
    p = harness.agentlog("convert", session_file(record), "--to", "unified", "--color", "never")
    assert p.returncode == 0, p.stderr
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def test_convert_gives_the_call_and_its_output(events, call, expected):
    calls = [e for e in events if e["kind"] == "tool_call"]
    assert [(e["payload"]["call_id"], e["payload"]["name"], e["payload"]["input"]) for e in calls] == \
        [(call["id"], mcp_run.TOOL, call["input"])]
    assert calls[0]["payload"]["tool_kind"] == "mcp"
    outputs = [e for e in events if e["kind"] == "tool_output"]
    assert len(outputs) == 1, outputs
    out = outputs[0]["payload"]
    assert out["call_id"] == call["id"] and out["name"] == mcp_run.TOOL
    assert out["failed"] is False and not out["is_error"]
    assert as_search_json(out["text"]) == expected


def test_convert_knows_every_record(events):
    unknown = [e for e in events if e["kind"] == "meta" and e["payload"].get("meta_type") == "unknown"]
    assert not unknown, unknown[:1]
