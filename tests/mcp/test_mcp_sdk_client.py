"""`agentlog mcp` through the MCP Python SDK's own client (PyPI `mcp`): every tool listed and
called on the project's corpus, its results equal to the commands' own output, errors as MCP
errors, and nothing outside the inputs it was started with reachable.

    python3 -m pip install 'mcp==2.3.0' pytest
    AGENTLOG_BIN=target/debug/agentlog python3 -m pytest tests/mcp
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

ROOT = Path(__file__).resolve().parents[2]
AGENTLOG = os.environ.get("AGENTLOG_BIN", str(ROOT / "target" / "debug" / "agentlog"))
CORPUS = str(ROOT / "corpus")
TOOLS = {"list_sessions", "search", "read_session", "usage", "tool_stats"}


def cli(*args: str) -> dict:
    """The command's own JSON output on the corpus."""
    p = subprocess.run([AGENTLOG, "-q", *args, CORPUS], capture_output=True, text=True, timeout=300)
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)


def session(calls):
    """Runs `calls(session)` against a fresh `agentlog mcp CORPUS`, returning its result."""
    async def main():
        params = StdioServerParameters(command=AGENTLOG, args=["mcp", CORPUS])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                return await calls(s)
    return asyncio.run(main())


def text(result) -> str:
    assert not result.is_error, result.content
    return "".join(c.text for c in result.content if c.type == "text")


def test_every_tool_is_listed_with_a_schema():
    tools = session(lambda s: s.list_tools())
    assert {t.name for t in tools.tools} == TOOLS
    for t in tools.tools:
        assert t.description, t.name
        assert t.input_schema["type"] == "object", t.name
        # Read-only, and closed: only the inputs it was started with.
        assert t.annotations.read_only_hint is True and t.annotations.open_world_hint is False, t.name
    search = next(t for t in tools.tools if t.name == "search")
    assert "query" in search.input_schema["required"]


def test_list_sessions_pages_through_every_session():
    async def calls(s):
        first = json.loads(text(await s.call_tool("list_sessions", {"limit": 5})))
        rest = json.loads(text(await s.call_tool("list_sessions", {"limit": 100000, "offset": 5})))
        return first, rest
    first, rest = session(calls)
    whole = cli("sessions", "--json")
    assert first["sessions_total"] == whole["sessions_total"] > 5
    assert first["next_offset"] == 5
    assert first["sessions"] + rest["sessions"] == whole["sessions"]


def test_search_gives_what_the_command_gives():
    async def calls(s):
        return json.loads(text(await s.call_tool("search", {"query": "fixture", "limit": 50})))
    got = session(calls)
    want = cli("search", "--json", "--limit", "50", "--tz", "UTC", "--", "fixture")
    assert got == want
    assert got["sessions"], "the corpus has sessions that mention a fixture"


def test_read_session_pages_a_markdown_transcript():
    sessions = cli("sessions", "--json")["sessions"]
    target = next(s for s in sessions if s["title"])

    async def calls(s):
        pages, offset = [], 0
        while offset is not None:
            page = json.loads(text(await s.call_tool(
                "read_session", {"session_id": target["session_id"], "offset": offset, "limit": 2000})))
            pages.append(page)
            offset = page["next_offset"]
        return pages
    pages = session(calls)
    transcript = "".join(p["text"] for p in pages)
    assert len(transcript) == pages[0]["total"]
    assert transcript.startswith("#")
    assert target["title"].rstrip("…")[:40] in " ".join(transcript.split())


def test_usage_and_tool_stats_give_what_the_commands_give():
    async def calls(s):
        usage = json.loads(text(await s.call_tool("usage", {"by": ["model"], "since": "2020-01-01"})))
        tools = json.loads(text(await s.call_tool("tool_stats", {"by": ["tool"]})))
        return usage, tools
    usage, tools = session(calls)
    assert usage == cli("usage", "--json", "--by=model", "--since=2020-01-01", "--tz=UTC")
    assert tools == cli("tools", "--json", "--by=tool", "--tz=UTC")
    assert usage["rows"] and tools["rows"]


def test_errors_are_mcp_errors():
    async def calls(s):
        unknown = await s.call_tool("read_session", {"session_id": "no-such-session"})
        bad_regex = await s.call_tool("search", {"query": "(", "regex": True})
        bad_key = await s.call_tool("usage", {"by": ["colour"]})
        missing = await s.call_tool("search", {})
        try:
            await s.call_tool("delete_everything", {})
            raised = None
        except MCPError as e:
            raised = e
        return unknown, bad_regex, bad_key, missing, raised
    unknown, bad_regex, bad_key, missing, raised = session(calls)
    for result in (unknown, bad_regex, bad_key, missing):
        assert result.is_error, result.content
        assert result.content[0].text
    assert "no-such-session" in unknown.content[0].text
    assert raised is not None and raised.code == -32602


def test_nothing_outside_the_inputs_is_reachable():
    outside = ROOT / "tests" / "mcp" / "outside"

    async def calls(s):
        # No tool takes a path: extra arguments naming one are ignored, and a query that looks
        # like a path or a flag is a query.
        listed = json.loads(text(await s.call_tool("list_sessions", {"limit": 100000, "inputs": [str(outside)]})))
        flag = await s.call_tool("search", {"query": "--help"})
        path = await s.call_tool("search", {"query": str(Path.home())})
        return listed, flag, path
    listed, flag, path = session(calls)
    assert listed["sessions"] == cli("sessions", "--json")["sessions"]
    for result in (flag, path):
        doc = json.loads(text(result))
        assert all(h["source"].startswith(CORPUS) for s in doc["sessions"] for h in s["hits"])
