#!/usr/bin/env python3
"""Claude Code using ``agentlog mcp`` (agentlog's MCP stdio server) against the scripted model server.

    python3 tests/agents/mcp.py run --out OUT [--word cart] [--server PATH]

Copies a few of the project's sample sessions (``corpus/``) into ``OUT/corpus``, records what
``agentlog search --json WORD OUT/corpus`` prints (``OUT/search.json``), then runs Claude Code (the
version pinned in ``harness.py``) once with the prompt ``[mcp-search] ...`` and agentlog as its only
MCP server::

    claude -p PROMPT --output-format json --model M --tools "" --system-prompt S
           --mcp-config '{"mcpServers":{"agentlog":{"command":"/abs/agentlog","args":["mcp","/abs/OUT/corpus"]}}}'
           --strict-mcp-config --allowedTools mcp__agentlog__search

The scripted model answers the first request with a ``tool_use`` of ``mcp__agentlog__search``
(``{"query": WORD}``), Claude Code calls ``search`` on agentlog's server and sends the result back in
its next request, which the model answers with text. Into ``OUT/claude-<version>/mcp-search/`` go
the HOME (the session file is ``home/.claude/projects/<project>/<session>.jsonl``) and the
``ledger.json`` of the model server, with every request body under ``requests/``; ``OUT/mcp.json``
records the run (the MCP config, the word, the search command and what it printed, the status).

``--server PATH``: another executable to run as ``PATH mcp DIR`` and ``PATH search --json WORD DIR``
(a stand-in while the agentlog binary has no ``mcp``); ``agentlog convert`` is always the real one.

``test_mcp.py`` checks what came out.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402

SCENARIO = "mcp-search"
SERVER_NAME = "agentlog"          # the key under mcpServers: Claude Code names its tools mcp__<key>__<tool>
TOOL = f"mcp__{SERVER_NAME}__search"
WORD = "cart"                     # agentlog search finds it in three sessions of CORPUS_FILES (Claude Code, Codex)
PROMPT = "[mcp-search] Search my earlier agent sessions for the word {word}."
ANSWER = "The search of the earlier sessions found the word in {n} sessions."
# a few sample sessions of corpus/, copied into OUT/corpus (agentlog tells the agents by content)
CORPUS_FILES = [
    "claude/user-and-assistant-text.jsonl",
    "claude/plan-and-multi-edit.jsonl",
    "claude/resumed-session",
    "codex/envelope-user-and-assistant-text.jsonl",
    "codex/tool-outputs.jsonl",
]


def make_corpus(out: Path) -> Path:
    corpus = out / "corpus"
    if corpus.exists():
        shutil.rmtree(corpus)
    for rel in CORPUS_FILES:
        src, dst = harness.REPO / "corpus" / rel, corpus / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            shutil.copy2(src, dst)
    return corpus


def has_mcp(server: Path) -> bool:
    """Whether ``server mcp --help`` works (the agentlog binary has the subcommand)."""
    try:
        p = subprocess.run([str(server), "mcp", "--help"], capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
    except OSError:
        return False
    return p.returncode == 0


def search_json(server: Path, word: str, corpus: Path, home: Path) -> dict:
    """What ``server search --json WORD CORPUS`` prints, and how it exited, run in the clean
    environment Claude Code starts its MCP server in (an empty HOME of its own)."""
    argv = [str(server), "search", "--json", word, str(corpus)]
    home.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                       env=harness.base_env(home, server), cwd=str(home))
    try:
        parsed = json.loads(p.stdout)
    except ValueError:
        parsed = None
    return {"argv": argv, "exit": p.returncode, "stdout": p.stdout, "stderr": p.stderr[-3000:], "json": parsed}


def mcp_config(server: Path, corpus: Path) -> dict:
    # no "type": a server with a command is a stdio server
    return {"mcpServers": {SERVER_NAME: {"command": str(server), "args": ["mcp", str(corpus)]}}}


def make_scenario(word: str, expected: dict | None) -> harness.Scenario:
    n = len((expected or {}).get("sessions") or [])
    return harness.Scenario(SCENARIO, {"main": [
        {"tool_calls": [{"name": TOOL, "input": {"query": word},
                         "expect_output": json.dumps(expected) if expected is not None else None}]},
        {"text": ANSWER.format(n=n)},
    ]}, [harness.Invocation(PROMPT.format(word=word))])


class McpClaudeAdapter(harness.ClaudeAdapter):
    """Claude Code with agentlog as its one MCP server, only that server's search tool allowed, no
    built-in tools and a short system prompt (a small session file)."""

    def __init__(self, config: dict):
        self.config = config

    def argv(self, exe, inv, first_session, image):
        a = [str(exe), "-p", inv.prompt, "--output-format", "json", "--model", harness.CLAUDE_MODEL,
             "--tools", "", "--system-prompt", harness.LEAN_SYSTEM_PROMPT,
             # --mcp-config and --allowedTools take several values: each ends at the next option
             "--mcp-config", json.dumps(self.config), "--strict-mcp-config",
             "--allowedTools", TOOL]
        return a, None


def run(out: Path, word: str = WORD, server: Path | None = None) -> dict:
    """The whole run into ``out``; gives (and writes into ``out/mcp.json``) its record."""
    out.mkdir(parents=True, exist_ok=True)
    server = (server or harness.agentlog_bin()).resolve()
    spec = harness.AGENTS["claude"]
    record = {"scenario": SCENARIO, "word": word, "tool": TOOL, "server": str(server), "agent": "claude",
              "version": spec.pinned}
    if not has_mcp(server):
        record["status"] = f"{server} has no `mcp` subcommand (`{server.name} mcp --help` failed)"
        (out / "mcp.json").write_text(json.dumps(record, indent=1))
        return record
    corpus = make_corpus(out)
    expected = search_json(server, word, corpus, out / "search-home")
    (out / "search.json").write_text(expected["stdout"])
    config = mcp_config(server, corpus)
    record.update(corpus=str(corpus), search=expected, mcp_config=config)
    exe = harness.install(spec, spec.pinned)
    scen = make_scenario(word, expected["json"])
    saved_scenario, saved_adapter = harness.scenario, harness.ADAPTERS["claude"]
    harness.scenario = lambda agent, name: scen if name == SCENARIO else saved_scenario(agent, name)
    harness.ADAPTERS["claude"] = McpClaudeAdapter(config)
    try:
        row = harness.run_scenario("claude", spec.pinned, exe, SCENARIO, out, dump_requests=True)
    finally:
        harness.scenario, harness.ADAPTERS["claude"] = saved_scenario, saved_adapter
    record.update(status=row["status"], scenario_dir=str(out / f"claude-{spec.pinned}" / SCENARIO),
                  files=row["files"])
    (out / "mcp.json").write_text(json.dumps(record, indent=1))
    return record


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run Claude Code with agentlog's MCP server against the scripted model")
    r.add_argument("--out", required=True)
    r.add_argument("--word", default=WORD, help=f"the word searched for (default {WORD})")
    r.add_argument("--server", help="run PATH mcp DIR / PATH search --json WORD DIR instead of agentlog's")
    a = ap.parse_args(argv)
    rec = run(Path(a.out).resolve(), a.word, Path(a.server) if a.server else None)
    print("| agent | version | scenario | MCP server | status | session files |")
    print("|---|---|---|---|---|---|")
    print(f"| claude | {rec['version']} | {SCENARIO} | {rec['server']} | {rec['status']} | "
          f"{'<br>'.join(rec.get('files') or []) or '-'} |")
    return 0 if rec["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
