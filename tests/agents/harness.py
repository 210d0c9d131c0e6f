#!/usr/bin/env python3
"""Run the real coding agents offline against the scripted model server.

    python3 tests/agents/harness.py run --out DIR
            [--agent all|claude,codex,gemini,copilot,opencode,kilo]
            [--version pinned|newest|X.Y.Z] [--scenario NAME|all] [--jobs N] [--shared-home]
    python3 tests/agents/harness.py table DIR [--bin PATH]
    python3 tests/agents/harness.py list

``run`` installs each agent at the asked version from npm (once, into
``$AGENTLOG_AGENTS_CACHE/<package>-<version>``, default
``~/.cache/agentlog-agents``), then for each scenario starts
``server.py`` on 127.0.0.1, runs the agent with a temporary HOME (and
CODEX_HOME) and a small temporary project directory, and writes into
``DIR/<agent>-<version>/<scenario>/``:

* ``home/``: the agent's home, with the session files it wrote
  (``home/.claude/projects/...``, ``home/.codex/sessions/...``,
  ``home/.gemini/tmp/<project>/chats/...``,
  ``home/.copilot/session-state/<id>/events.jsonl``,
  ``home/.local/share/opencode/opencode.db``, ``home/.local/share/kilo/kilo.db``);
* for OpenCode and Kilo CLI, which keep their sessions in SQLite: the store
  as the agent left it, copied out of the home once every agent process of
  the scenario has exited (``opencode.db`` or ``kilo.db`` with its ``-wal``
  and ``-shm``: after a run the rows are in the ``-wal``);
* ``ledger.json``: every request the server received, every response it
  served (with usage), what was typed, and each agent process's exit status.

``table`` converts each scenario's session files with agentlog and prints a
Markdown table of what came out.  See README.md in this directory.
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

import server as model_server  # noqa: E402

# ---------------------------------------------------------------------------
# the agents: one table of pins


# the scenarios of the agents that write JSONL session files
SCENARIOS = ["text", "reasoning", "tools", "two-turns", "image", "subagent", "subagent-background", "resume",
             "compaction", "api-error"]
# the scenarios of OpenCode and Kilo CLI (SQLite stores): the prompt on stdin, a failing and an unknown
# tool, and the reasoning and tools scenarios once more through the Anthropic Messages API
STORE_SCENARIOS = ["text", "text-stdin", "reasoning", "reasoning-anthropic", "tools", "tools-anthropic",
                   "tool-error", "two-turns", "resume", "subagent", "api-error"]


@dataclass(frozen=True)
class AgentSpec:
    name: str          # short name used in output paths: claude, codex, gemini, copilot, opencode, kilo, ...
    package: str       # npm package (PyPI package if registry is "pypi")
    pinned: str        # version the tests run by default
    bin: str           # executable under node_modules/.bin, or a path under node_modules (with a "/")
    cache_prefix: str  # install directory name: <cache_prefix>-<version>
    session_kind: str  # agentlog's name for the agent (`agent` in the unified output)
    scenarios: tuple = tuple(SCENARIOS)  # what --scenario all runs
    store: str | None = None  # the SQLite store the agent keeps its sessions in (None: JSONL files)
    registry: str = "npm"     # where the package comes from: "npm" or "pypi"
    moved_to: str | None = None  # the npm package of the later versions, where the agent moved (newest is there)


AGENTS = {
    "claude": AgentSpec("claude", "@anthropic-ai/claude-code", "2.1.328", "claude", "claude-code", "claude-code"),
    "codex": AgentSpec("codex", "@openai/codex", "0.169.0", "codex", "codex", "codex"),
    "gemini": AgentSpec("gemini", "@google/gemini-cli", "0.61.0", "gemini", "gemini-cli", "gemini-cli"),
    "copilot": AgentSpec("copilot", "@github/copilot", "1.0.102", "copilot", "copilot", "copilot-cli"),
    "opencode": AgentSpec("opencode", "opencode-ai", "1.18.33", "opencode", "opencode", "opencode",
                          tuple(STORE_SCENARIOS), "opencode.db"),
    # 7.8.1 is newer, but its platform package @kilocode/cli-linux-x64@7.8.1 is not on every registry
    "kilo": AgentSpec("kilo", "@kilocode/cli", "7.7.7", "kilo", "kilo", "kilo", tuple(STORE_SCENARIOS), "kilo.db"),
}

ALL_SCENARIOS = SCENARIOS + [s for s in STORE_SCENARIOS if s not in SCENARIOS]

AGENT_TIMEOUT = float(os.environ.get("AGENTLOG_AGENTS_TIMEOUT", "90"))  # seconds per agent process
NPM_TIMEOUT = 900
CLAUDE_MODEL = "claude-sonnet-4-5"
CODEX_MODEL = "gpt-5-codex"
GEMINI_MODEL = "gemini-2.5-flash"
COPILOT_MODEL = "gpt-4.1"
API_KEY_ENV = "AGENTLOG_TEST_API_KEY"


def cache_root() -> Path:
    return Path(os.environ.get("AGENTLOG_AGENTS_CACHE") or Path.home() / ".cache" / "agentlog-agents")


def copilot_cache() -> Path:
    """XDG_CACHE_HOME shared by the Copilot CLI runs (it unpacks each version there once)."""
    return cache_root() / "copilot-xdg-cache"


def resolve_version(spec: AgentSpec, version: str) -> str:
    if version == "pinned":
        return spec.pinned
    if version == "newest" and spec.registry == "pypi":
        # an agent whose venv another interpreter makes: its releases for any Python
        other = ["--ignore-requires-python"] if hasattr(ADAPTERS.get(spec.name), "venv_python") else []
        out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", *other, spec.package],
                             capture_output=True, text=True, timeout=120, check=True)
        m = re.search(r"\((\S+)\)", out.stdout)
        if not m:
            raise RuntimeError(f"pip index versions {spec.package}: {out.stdout!r}")
        return m.group(1)
    if version == "newest":
        out = subprocess.run(["npm", "view", spec.moved_to or spec.package, "version"], capture_output=True,
                             text=True, timeout=120, check=True)
        return out.stdout.strip().splitlines()[-1].strip()
    return version


def npm_package(spec: AgentSpec, version: str) -> str:
    """The npm package of an agent's version: ``spec.package``, or ``spec.moved_to`` for a version
    only the package it moved to has (installed there already, or not on the first package)."""
    if not spec.moved_to:
        return spec.package
    installed = cache_root() / f"{spec.cache_prefix}-{version}" / "node_modules"
    for package in (spec.package, spec.moved_to):
        if (installed / Path(*package.split("/")) / "package.json").exists():
            return package
    out = subprocess.run(["npm", "view", f"{spec.package}@{version}", "version"], capture_output=True, text=True,
                         timeout=120)
    return spec.package if out.stdout.strip() else spec.moved_to


def install(spec: AgentSpec, version: str, log=print) -> Path:
    """The agent's executable, installed from npm (or PyPI) into the cache if missing."""
    prefix = cache_root() / f"{spec.cache_prefix}-{version}"
    if spec.registry == "pypi":
        return install_pypi(spec, version, prefix, log)
    # a platform package without a `bin` entry (Factory Droid) names its executable by path
    exe = prefix / "node_modules" / (spec.bin if "/" in spec.bin else Path(".bin", spec.bin))
    package = npm_package(spec, version)
    pkg_json = prefix / "node_modules" / Path(*package.split("/")) / "package.json"
    if exe.exists() and pkg_json.exists() and json.loads(pkg_json.read_text()).get("version") == version:
        return exe
    prefix.mkdir(parents=True, exist_ok=True)
    log(f"installing {package}@{version} into {prefix}")
    subprocess.run(["npm", "install", "--prefix", str(prefix), "--save-exact", "--no-audit", "--no-fund",
                    f"{package}@{version}"], check=True, timeout=NPM_TIMEOUT,
                   stdout=subprocess.DEVNULL if log is None else None)
    if not exe.exists():
        raise RuntimeError(f"{exe} missing after npm install")
    return exe


def install_pypi(spec: AgentSpec, version: str, prefix: Path, log=print) -> Path:
    """The agent's executable, installed from PyPI into a virtual environment of its own,
    ``<prefix>/venv``, if missing (a ``.installed`` file names the version once pip succeeded)."""
    venv = prefix / "venv"
    exe = venv / "bin" / spec.bin
    marker = prefix / ".installed"
    if exe.exists() and marker.exists() and marker.read_text().strip() == f"{spec.package}=={version}":
        return exe
    prefix.mkdir(parents=True, exist_ok=True)
    log(f"installing {spec.package}=={version} into {venv}")
    # an adapter's ``venv_python()`` names another interpreter (OpenHands needs Python 3.12 or later)
    hook = getattr(ADAPTERS.get(spec.name), "venv_python", None)
    python = (hook() if hook else None) or sys.executable
    subprocess.run([python, "-m", "venv", "--clear", str(venv)], check=True, timeout=NPM_TIMEOUT)
    extra = getattr(ADAPTERS.get(spec.name), "pip_args", lambda v: [])(version)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    *extra, f"{spec.package}=={version}"], check=True, timeout=NPM_TIMEOUT,
                   stdout=subprocess.DEVNULL if log is None else None)
    if not exe.exists():
        raise RuntimeError(f"{exe} missing after pip install")
    marker.write_text(f"{spec.package}=={version}\n")
    return exe


def warm_up(agent: str, exe: Path) -> None:
    """Copilot CLI unpacks its package into $XDG_CACHE_HOME on its first start: do it once, before
    scenarios run side by side. An agent's adapter may do its own first start (``warm_up(exe)``)."""
    hook = getattr(ADAPTERS.get(agent), "warm_up", None)
    if hook:
        hook(exe)
        return
    if agent != "copilot":
        return
    with tempfile.TemporaryDirectory(prefix="agentlog-copilot-warmup-") as home:
        env = base_env(Path(home), exe)
        env.update({"XDG_CACHE_HOME": str(copilot_cache()), "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false"})
        subprocess.run([str(exe), "--version"], env=env, cwd=home, stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=AGENT_TIMEOUT * 3, start_new_session=True)


# ---------------------------------------------------------------------------
# scenarios


def tiny_png(width: int = 8, height: int = 8, rgb=(200, 30, 30)) -> bytes:
    """A small solid-colour PNG, made with the standard library."""
    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


@dataclass
class Invocation:
    prompt: str
    mode: str = "new"          # new | continue (the latest session) | resume (by the first run's id)
    kind: str = "message"      # message: a typed prompt; command: a slash command such as /compact
    image: bool = False
    stdin: bool = False        # the prompt on standard input, not as an argument


@dataclass
class Scenario:
    name: str
    script: dict
    invocations: list[Invocation]
    config: dict = field(default_factory=dict)   # agent-specific settings for this scenario
    unsupported: str | None = None


def json_lines(text: str):
    """The JSON objects of the lines of ``text`` that hold one, in order."""
    for line in text.splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if isinstance(d, dict):
            yield d


def shell(command: str, output: str, failed: bool, exit_code: int) -> dict:
    return {"tool": "shell", "command": command, "expect_output": output, "expect_failed": failed,
            "expect_exit_code": exit_code}


def scenario(agent: str, name: str) -> Scenario:
    """The scenario ``name`` for ``agent``: what is typed and what the model answers."""
    p = f"[{name}]"
    own = getattr(ADAPTERS.get(agent), "scenario", None)
    if own and name in AGENTS[agent].scenarios and (made := own(name)) is not None:
        return made
    if name not in AGENTS[agent].scenarios:
        return Scenario(name, {}, [], unsupported=f"not a scenario of this agent (its scenarios: "
                        f"{', '.join(AGENTS[agent].scenarios)})")
    if name.endswith("-anthropic"):
        # OpenCode and Kilo CLI speak to a provider through the AI SDK package the config names:
        # @ai-sdk/anthropic sends the same script as Anthropic Messages requests
        base = scenario(agent, name.removesuffix("-anthropic"))
        invs = [Invocation(i.prompt.replace(f"[{base.name}]", p, 1), i.mode, i.kind, i.image, i.stdin)
                for i in base.invocations]
        return Scenario(name, base.script, invs, dict(base.config, provider_npm="@ai-sdk/anthropic"))
    if name == "text-stdin":
        return Scenario(name, {"main": [{"text": "Hello from the scripted model. The prompt came on stdin."}]},
                        [Invocation(f"{p} Say hello to the test suite.", stdin=True)])
    if name == "tool-error":
        # a tool that fails (read of a missing file) and a call of a tool the request did not offer
        return Scenario(name, {"main": [
            {"text": "Reading a file.",
             "tool_calls": [{"name": "read", "input": {"filePath": "/nonexistent/missing.txt"},
                             "expect_output": "not found", "expect_failed": True}]},
            {"tool_calls": [{"name": "no_such_tool", "input": {"x": 1}, "unknown_tool": True,
                             "expect_output": "no_such_tool"}]},
            {"text": "The file is missing and the tool does not exist."},
        ]}, [Invocation(f"{p} Read a missing file.")])
    if name == "text":
        return Scenario(name, {"main": [{"text": "Hello from the scripted model. This is the text scenario."}]},
                        [Invocation(f"{p} Say hello to the test suite.")])
    if name == "reasoning":
        return Scenario(name, {"main": [{"thinking": "The user wants a greeting. A short one will do.",
                                         "text": "Hello after some thought."}]},
                        [Invocation(f"{p} Think first, then say hello.")])
    if name == "tools":
        return Scenario(name, {"main": [
            {"text": "I will run two commands.", "tool_calls": [shell("echo hello", "hello", False, 0)]},
            {"tool_calls": [shell("ls /nonexistent", "No such file or directory", True, 2)]},
            {"text": "The echo printed hello and the ls failed because the path does not exist."},
        ]}, [Invocation(f"{p} Run echo hello, then list /nonexistent.")])
    if name == "two-turns":
        return Scenario(name, {"main": [{"text": "First answer: noted."}, {"text": "Second answer: still here."}]},
                        [Invocation(f"{p} First prompt of two."), Invocation(f"{p} Second prompt of two.", mode="continue")])
    if name == "resume":
        return Scenario(name, {"main": [
            {"text": "Starting.", "tool_calls": [shell("echo resumed-session", "resumed-session", False, 0)]},
            {"text": "Done for now."},
            {"text": "Welcome back: the earlier command printed resumed-session."},
        ]}, [Invocation(f"{p} Run a command and stop."), Invocation(f"{p} Pick up where we left off.", mode="resume")])
    if name == "image":
        # Gemini CLI attaches a file named with @ in the prompt
        prompt = f"{p} Describe the attached image @red-square.png" if agent == "gemini" else f"{p} Describe the attached image."
        return Scenario(name, {"main": [{"text": "The image is a small red square."}]},
                        [Invocation(prompt, image=True)])
    if name == "api-error":
        err = ({"status": 529, "type": "overloaded_error", "message": "Overloaded"} if agent == "claude"
               else {"status": 503, "type": "UNAVAILABLE", "message": "The model is overloaded."} if agent == "gemini"
               else {"status": 500, "type": "server_error", "message": "The server had an error."})
        return Scenario(name, {"main": [{"error": err}, {"text": "Answer after one retry."}]},
                        [Invocation(f"{p} Answer despite a server error.")])
    if name == "subagent":
        marker = "SUBTASK-7F3A"
        sub_prompt = f"{marker}: run echo from-subagent and report what it printed."
        if agent == "claude":
            return Scenario(name, {
                "subagent_marker": marker,
                "main": [{"text": "I will delegate this.",
                          "tool_calls": [{"tool": "subagent", "description": "Run a command", "prompt": sub_prompt,
                                         "background": False}]},
                         {"text": "The subagent reported from-subagent."}],
                "subagent": [{"tool_calls": [shell("echo from-subagent", "from-subagent", False, 0)]},
                             {"text": "Subagent result: the command printed from-subagent."}],
            }, [Invocation(f"{p} Delegate a command to a subagent.")])
        if agent == "gemini":
            # invoke_agent runs the "generalist" subagent and waits; the subagent ends with complete_task
            return Scenario(name, {
                "subagent_marker": marker,
                "main": [{"text": "I will delegate this.",
                          "tool_calls": [{"tool": "subagent", "agent_name": "generalist", "prompt": sub_prompt}]},
                         {"text": "The subagent reported from-subagent."}],
                "subagent": [{"tool_calls": [shell("echo from-subagent", "from-subagent", False, 0)]},
                             {"text": "Subagent result: the command printed from-subagent.",
                              "tool_calls": [{"tool": "finish_subagent",
                                              "result": "Subagent result: the command printed from-subagent."}]}],
            }, [Invocation(f"{p} Delegate a command to a subagent.")])
        if AGENTS[agent].store:
            # OpenCode's and Kilo CLI's task tool runs the subagent in a child session and waits for it
            return Scenario(name, {
                "subagent_marker": marker,
                "main": [{"text": "I will delegate this.",
                          "tool_calls": [{"name": "task", "input": {
                              "description": "Run a command", "prompt": sub_prompt, "subagent_type": "general"}}]},
                         {"text": "The subagent reported from-subagent."}],
                "subagent": [{"tool_calls": [shell("echo from-subagent", "from-subagent", False, 0)]},
                             {"text": "Subagent result: the command printed from-subagent."}],
            }, [Invocation(f"{p} Delegate a command to a subagent.")])
        if agent == "copilot":
            # the task tool in sync mode waits for the subagent
            return Scenario(name, {
                "subagent_marker": marker,
                "main": [{"text": "I will delegate this.",
                          "tool_calls": [{"tool": "subagent", "description": "Run a command", "prompt": sub_prompt,
                                          "subagent_type": "general-purpose", "background": False}]},
                         {"text": "The subagent reported from-subagent."}],
                "subagent": [{"tool_calls": [shell("echo from-subagent", "from-subagent", False, 0)]},
                             {"text": "Subagent result: the command printed from-subagent."}],
            }, [Invocation(f"{p} Delegate a command to a subagent.")])
        return Scenario(name, {
            "subagent_marker": marker,
            "main": [{"text": "I will delegate this.", "tool_calls": [{"tool": "subagent", "prompt": sub_prompt}]},
                     {"tool_calls": [{"tool": "wait_subagent"}]},
                     {"text": "The subagent reported from-subagent."}],
            "subagent": [{"tool_calls": [shell("echo from-subagent", "from-subagent", False, 0)]},
                         {"text": "Subagent result: the command printed from-subagent."}],
        }, [Invocation(f"{p} Delegate a command to a subagent.")])
    if name == "subagent-background":
        if agent == "codex":
            return Scenario(name, {}, [], unsupported="Codex subagents are always asynchronous (spawn_agent, then "
                            "wait_agent): the subagent scenario is already this one")
        if agent == "gemini":
            return Scenario(name, {}, [], unsupported="Gemini CLI's invoke_agent always waits for its subagent "
                            "(wait_for_previous only orders calls of one turn): there is no background subagent")
        marker = "SUBTASK-B4C1"
        sub_prompt = f"{marker}: run echo from-background-subagent and report what it printed."
        return Scenario(name, {
            "subagent_marker": marker,
            "main": [{"text": "I will delegate this in the background.",
                      "tool_calls": [{"tool": "subagent", "description": "Background command", "prompt": sub_prompt,
                                      "background": True}]},
                     {"text": "Waiting for the background subagent."},
                     {"text": "The background subagent reported from-background-subagent."}],
            "subagent": [{"tool_calls": [shell("echo from-background-subagent", "from-background-subagent", False, 0)]},
                         {"text": "Background result: the command printed from-background-subagent."}],
        }, [Invocation(f"{p} Delegate a command to a background subagent.")])
    if name == "compaction":
        summary = "Summary: the user asked to remember the word PELICAN."
        if agent == "claude":
            return Scenario(name, {"main": [{"text": "Noted: PELICAN."}, {"text": "The word was PELICAN."}],
                                   "compact": [{"text": f"<summary>\n{summary}\n</summary>"}]},
                            [Invocation(f"{p} Remember the word PELICAN."),
                             Invocation("/compact", mode="continue", kind="command"),
                             Invocation(f"{p} Which word did I ask you to remember?", mode="continue")])
        if agent == "gemini":
            # auto-compression: model.compressionThreshold 0.001 of gemini-2.5-flash's 1,048,576 tokens is
            # below the first prompt's reported size, so the resumed run compresses before its request;
            # the compression is two requests, a summary and its verification
            snap = f"<state_snapshot>\n{summary}\n</state_snapshot>"
            return Scenario(name, {"main": [{"text": "Noted: PELICAN."}, {"text": "The word was PELICAN."}],
                                   "compact": [{"text": snap}, {"text": snap}]},
                            [Invocation(f"{p} Remember the word PELICAN."),
                             Invocation(f"{p} Which word did I ask you to remember?", mode="continue")],
                            config={"compression_threshold": 0.00001})
        if agent == "copilot":
            return Scenario(name, {"main": [{"text": "Noted: PELICAN."}, {"text": "The word was PELICAN."}],
                                   "compact": [{"text": summary}]},
                            [Invocation(f"{p} Remember the word PELICAN."),
                             Invocation("/compact", mode="continue", kind="command"),
                             Invocation(f"{p} Which word did I ask you to remember?", mode="continue")])
        return Scenario(name, {"main": [{"text": "Noted: PELICAN."}, {"text": "The word was PELICAN."}],
                               "compact": [{"text": summary}]},
                        [Invocation(f"{p} Remember the word PELICAN."),
                         Invocation(f"{p} Which word did I ask you to remember?", mode="continue")],
                        config={"auto_compact_token_limit": 1000})
    raise KeyError(name)


# ---------------------------------------------------------------------------
# running one scenario


def base_env(home: Path, exe: Path) -> dict:
    """A clean environment: nothing of the user's, no proxies, no telemetry."""
    path = os.pathsep.join([str(exe.parent), str(Path(shutil.which("node") or "/usr/bin/node").parent),
                            "/usr/local/bin", "/usr/bin", "/bin"])
    return {"PATH": path, "HOME": str(home), "USER": "agentlog-test", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "TERM": "dumb", "NO_COLOR": "1", "TMPDIR": os.environ.get("TMPDIR", "/tmp"), "SHELL": "/bin/bash",
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost", API_KEY_ENV: "test"}


LEAN_SYSTEM_PROMPT = "You are a coding agent under test. Follow the instructions of the user."


def skip_or_fail(reason: str) -> None:
    """Skips a test that cannot run here (no agent, no binary), except under CI (CI=true), which
    must run them all: there it fails."""
    import pytest

    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


class ClaudeAdapter:
    """Claude Code: ``claude -p`` with ANTHROPIC_BASE_URL pointing at the server."""

    lean = False  # --lean: fewer tools and a short system prompt, for small sample files

    def unsupported(self, name: str, exe: Path | None = None) -> str | None:
        return None

    def prepare(self, home: Path, project: Path, base_url: str, scen: Scenario) -> None:
        (home / ".claude").mkdir(parents=True, exist_ok=True)

    def env(self, home: Path, exe: Path, base_url: str) -> dict:
        e = base_env(home, exe)
        e.update({
            "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "test",
            "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_BUG_COMMAND": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_MAX_RETRIES": "3", "CLAUDE_CODE_OVERLOADED_RETRY_BASE_DELAY_MS": "50",
            "CLAUDE_CODE_OVERLOADED_RETRY_MAX_DELAY_MS": "200",
        })
        return e

    def argv(self, exe: Path, inv: Invocation, first_session: str | None, image: Path | None) -> tuple[list, str | None]:
        a = [str(exe), "-p"]
        stdin = None
        if inv.image:
            a += ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
            data = base64.b64encode(image.read_bytes()).decode()
            stdin = json.dumps({"type": "user", "message": {"role": "user", "content": [
                {"type": "text", "text": inv.prompt},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}]}}) + "\n"
        else:
            a += [inv.prompt, "--output-format", "json"]
        # -p asks for thinking with display "omitted" (signature only) unless told otherwise; the hidden
        # --thinking-display flag (as the Agent SDK passes it) asks for the thinking text
        a += ["--allowedTools", "Bash,Agent", "--model", CLAUDE_MODEL, "--thinking-display", "summarized"]
        if self.lean:
            # the system prompt and every tool's schema are written into each session file
            # (prompt_snapshot, api-request-shape): ~250 KB per file by default, ~85 KB so
            a += ["--tools", "Bash,Agent", "--system-prompt", LEAN_SYSTEM_PROMPT]
        if inv.mode == "continue":
            a += ["--continue"]
        elif inv.mode == "resume":
            a += ["--resume", first_session]
        return a, stdin

    def session_id(self, stdout: str, stderr: str = "", home: Path | None = None) -> str | None:
        for line in reversed(stdout.strip().splitlines()):
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if isinstance(d, dict) and d.get("session_id"):
                return d["session_id"]
        return None

    def session_roots(self, home: Path) -> list[Path]:
        return [home / ".claude" / "projects"]


class CodexAdapter:
    """Codex CLI: ``codex exec`` with a model provider in CODEX_HOME/config.toml pointing at the server."""

    def unsupported(self, name: str, exe: Path | None = None) -> str | None:
        return None

    def prepare(self, home: Path, project: Path, base_url: str, scen: Scenario) -> None:
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        extra = ""
        if "auto_compact_token_limit" in scen.config:
            extra += f"model_auto_compact_token_limit = {scen.config['auto_compact_token_limit']}\n"
        (codex_home / "config.toml").write_text(
            f'model = "{CODEX_MODEL}"\n'
            'model_provider = "agentlog-test"\n'
            'approval_policy = "never"\n'
            'sandbox_mode = "danger-full-access"\n'
            'model_reasoning_summary = "detailed"\n'
            'check_for_update_on_startup = false\n'
            f"{extra}"
            "\n[analytics]\nenabled = false\n"
            "\n[feedback]\nenabled = false\n"
            "\n[model_providers.agentlog-test]\n"
            'name = "agentlog test server"\n'
            f'base_url = "{base_url}/v1"\n'
            f'env_key = "{API_KEY_ENV}"\n'
            'wire_api = "responses"\n'
            "request_max_retries = 3\n"
            "stream_max_retries = 1\n"
            "stream_idle_timeout_ms = 30000\n")

    def env(self, home: Path, exe: Path, base_url: str) -> dict:
        e = base_env(home, exe)
        e["CODEX_HOME"] = str(home / ".codex")
        return e

    def argv(self, exe: Path, inv: Invocation, first_session: str | None, image: Path | None) -> tuple[list, str | None]:
        a = [str(exe), "exec"]
        if inv.mode == "continue":
            a += ["resume", "--last"]
        elif inv.mode == "resume":
            a += ["resume", first_session]
        a += ["--skip-git-repo-check", "--json", inv.prompt]
        if inv.image:
            a += ["-i", str(image)]  # after the prompt: -i takes several values
        return a, None

    def session_id(self, stdout: str, stderr: str = "", home: Path | None = None) -> str | None:
        return next((d.get("thread_id") for d in json_lines(stdout) if d.get("type") == "thread.started"), None)

    def session_roots(self, home: Path) -> list[Path]:
        return [home / ".codex" / "sessions", home / ".codex" / "archived_sessions"]


GEMINI_SETTINGS = {
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False,
                "checkpointing": {"enabled": False}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False, "logPrompts": False},
    # without it, GOOGLE_GEMINI_BASE_URL selects the "gateway" auth type, which -p rejects (exit 41)
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "ide": {"enabled": False},
    "ui": {"hideTips": True, "hideBanner": True},
}


class GeminiAdapter:
    """Gemini CLI: ``gemini --yolo -m MODEL -p`` with GOOGLE_GEMINI_BASE_URL pointing at the server."""

    def unsupported(self, name: str, exe: Path | None = None) -> str | None:
        return None

    def prepare(self, home: Path, project: Path, base_url: str, scen: Scenario) -> None:
        settings = json.loads(json.dumps(GEMINI_SETTINGS))
        if "compression_threshold" in scen.config:
            # compress once the last prompt (as the API reported it) exceeds this share of the model's window
            settings["model"] = {"compressionThreshold": scen.config["compression_threshold"]}
        (home / ".gemini").mkdir(parents=True, exist_ok=True)
        (home / ".gemini" / "settings.json").write_text(json.dumps(settings, indent=2))

    def env(self, home: Path, exe: Path, base_url: str) -> dict:
        e = base_env(home, exe)
        e.update({"GEMINI_API_KEY": "test", "GOOGLE_GEMINI_BASE_URL": base_url, "NO_BROWSER": "true"})
        return e

    def argv(self, exe: Path, inv: Invocation, first_session: str | None, image: Path | None) -> tuple[list, str | None]:
        # --yolo: -p offers the shell tool only then; -m: no routing (classifier) request per prompt
        a = [str(exe), "--yolo", "-m", GEMINI_MODEL, "-o", "json"]
        if inv.mode == "continue":
            a += ["--resume", "latest"]
        elif inv.mode == "resume":
            a += ["--resume", first_session]
        # an image is attached by naming it in the prompt (@red-square.png)
        a += ["-p", inv.prompt]
        return a, None

    def session_id(self, stdout: str, stderr: str = "", home: Path | None = None) -> str | None:
        try:
            d = json.loads(stdout[stdout.index("{"):]) if "{" in stdout else {}
        except ValueError:
            d = {}
        if isinstance(d, dict) and d.get("session_id"):
            return d["session_id"]
        # else the newest main session file's header
        files = sorted((home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl"), key=lambda f: f.stat().st_mtime) if home else []
        for f in reversed(files):
            try:
                return json.loads(f.read_text().splitlines()[0]).get("sessionId")
            except (ValueError, IndexError):
                continue
        return None

    def session_roots(self, home: Path) -> list[Path]:
        return [home / ".gemini" / "tmp"]


class CopilotAdapter:
    """Copilot CLI: ``copilot -p`` with a BYOK provider (COPILOT_PROVIDER_BASE_URL) at the server, offline."""

    def unsupported(self, name: str, exe: Path | None = None) -> str | None:
        if name == "image" and exe and not self._supports(exe, "--attachment"):
            return ("this version has no --attachment, and an @file mention in a -p prompt is sent as text: "
                    "no way to attach an image in -p mode")
        return None

    def prepare(self, home: Path, project: Path, base_url: str, scen: Scenario) -> None:
        (home / ".copilot").mkdir(parents=True, exist_ok=True)
        self.config = scen.config

    def env(self, home: Path, exe: Path, base_url: str) -> dict:
        e = base_env(home, exe)
        e.update({
            # the executable unpacks its JavaScript (~235 MB) into $XDG_CACHE_HOME/copilot/pkg once
            "XDG_CACHE_HOME": str(copilot_cache()),
            "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_PROVIDER_BASE_URL": base_url + "/v1", "COPILOT_PROVIDER_TYPE": "openai",
            "COPILOT_PROVIDER_WIRE_API": "completions", "COPILOT_PROVIDER_API_KEY": "test",
            "COPILOT_MODEL": COPILOT_MODEL,
        })
        for k, v in (getattr(self, "config", None) or {}).get("env", {}).items():
            e[k] = v
        return e

    _help: dict = {}

    def _supports(self, exe: Path, flag: str) -> bool:
        """Whether this version's --help lists ``flag`` (older versions lack some)."""
        if exe not in self._help:
            env = self.env(Path(tempfile.gettempdir()), exe, "http://127.0.0.1:9")
            try:
                p = subprocess.run([str(exe), "--help"], env=env, capture_output=True, text=True, timeout=60,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
                self._help[exe] = p.stdout + p.stderr
            except subprocess.TimeoutExpired:
                self._help[exe] = ""
        return flag in self._help[exe]

    def argv(self, exe: Path, inv: Invocation, first_session: str | None, image: Path | None) -> tuple[list, str | None]:
        # --no-auto-update: run this version, not a newer one found unpacked in the cache
        a = [str(exe), "-p", inv.prompt, "--allow-all-tools", "--no-auto-update"]
        if self._supports(exe, "--allow-all-paths"):
            a += ["--allow-all-paths"]  # 1.0.20 denies `ls /nonexistent` (outside the project) without it
        if self._supports(exe, "--disable-client-telemetry"):
            a += ["--disable-client-telemetry"]  # COPILOT_OFFLINE=true turns telemetry off too
        if inv.mode == "continue":
            a += ["--continue"]
        elif inv.mode == "resume":
            a += [f"--resume={first_session}"]
        if inv.image:
            a += ["--attachment", str(image)]
        return a, None

    _RESUME = re.compile(r"--resume[= ]([0-9a-f-]{36})")

    def session_id(self, stdout: str, stderr: str = "", home: Path | None = None) -> str | None:
        # -p ends with a summary on stderr: "Resume  copilot --resume=<id>"
        m = self._RESUME.search(stderr) or self._RESUME.search(stdout)
        if m:
            return m.group(1)
        # older versions print no resume hint: the newest session directory
        dirs = sorted((home / ".copilot" / "session-state").glob("*/events.jsonl"),
                      key=lambda f: f.stat().st_mtime) if home else []
        return dirs[-1].parent.name if dirs else None

    def session_roots(self, home: Path) -> list[Path]:
        return [home / ".copilot" / "session-state"]


STORE_PROVIDER = "fake"
STORE_MODEL = "fake-model"


class OpenCodeAdapter:
    """OpenCode: ``opencode run --format json`` with a provider in ``~/.config/opencode/opencode.json``
    whose base URL is the server. Sessions go to the SQLite store ``~/.local/share/opencode/opencode.db``."""

    config_dir = "opencode"        # under ~/.config and ~/.local/share
    config_file = "opencode.json"
    schema = "https://opencode.ai/config.json"
    env_prefix = "OPENCODE"
    store = "opencode.db"

    def unsupported(self, name: str, exe: Path | None = None) -> str | None:
        return None

    def config(self, base_url: str, scen: Scenario) -> dict:
        return {
            "$schema": self.schema,
            "autoupdate": False,
            "share": "disabled",
            "model": f"{STORE_PROVIDER}/{STORE_MODEL}",
            "small_model": f"{STORE_PROVIDER}/{STORE_MODEL}",   # the title request's model
            # only the scripted provider: no model list fetched for built-in providers (Kilo's gateway)
            "enabled_providers": [STORE_PROVIDER],
            "provider": {STORE_PROVIDER: {
                # an AI SDK provider package bundled in the binary: @ai-sdk/openai-compatible sends Chat
                # Completions requests, @ai-sdk/anthropic Messages requests
                "npm": scen.config.get("provider_npm", "@ai-sdk/openai-compatible"),
                "name": "Scripted test server",
                "options": {"baseURL": base_url + "/v1", "apiKey": "test"},
                "models": {STORE_MODEL: {
                    "name": "Fake model", "tool_call": True, "reasoning": True, "attachment": False,
                    # USD per million tokens: the stored cost is checkable
                    "cost": {"input": 1, "output": 2, "cache_read": 0.5, "cache_write": 1.25},
                    "limit": {"context": 200000, "output": 8192}}}}},
            # run never stops to ask (ls /nonexistent is outside the project)
            "permission": {"bash": "allow", "edit": "allow", "external_directory": "allow", "task": "allow"},
        }

    def prepare(self, home: Path, project: Path, base_url: str, scen: Scenario) -> None:
        conf = home / ".config" / self.config_dir
        conf.mkdir(parents=True, exist_ok=True)
        (conf / self.config_file).write_text(json.dumps(self.config(base_url, scen), indent=2))

    def env(self, home: Path, exe: Path, base_url: str) -> dict:
        e = base_env(home, exe)
        # on every start the agent's embedded npm client installs its plugin package into each config
        # directory in the background: offline, it logs a warning and goes on
        e["npm_config_offline"] = "true"
        for k in ("DISABLE_MODELS_FETCH", "DISABLE_AUTOUPDATE", "DISABLE_SHARE", "DISABLE_LSP_DOWNLOAD",
                  "DISABLE_DEFAULT_PLUGINS", "DISABLE_CLAUDE_CODE", "DISABLE_EXTERNAL_SKILLS"):
            e[f"{self.env_prefix}_{k}"] = "1"
        return e

    def argv(self, exe: Path, inv: Invocation, first_session: str | None, image: Path | None) -> tuple[list, str | None]:
        a = [str(exe), "run", "--format", "json", "--print-logs", "--log-level", "INFO"]
        if inv.mode == "continue":
            a += ["--continue"]
        elif inv.mode == "resume":
            a += ["--session", first_session]
        if inv.stdin:
            return a, inv.prompt
        # run joins its message arguments and wraps each that holds a space in double quotes: the
        # prompt is sent and stored as "…"
        return a + [inv.prompt], None

    def session_id(self, stdout: str, stderr: str = "", home: Path | None = None) -> str | None:
        # --format json: one event a line, each with the sessionID
        return next((d["sessionID"] for d in json_lines(stdout) if d.get("sessionID")), None)

    def store_dir(self, home: Path) -> Path:
        return home / ".local" / "share" / self.config_dir

    def collect(self, home: Path, scen_dir: Path) -> list[str]:
        """Copies the store (the database and its -wal and -shm, together) into the scenario
        directory once the agent has exited: nothing is checkpointed at exit, so the rows of the
        last process are in the -wal."""
        copied = []
        for suffix in ("", "-wal", "-shm"):
            f = self.store_dir(home) / (self.store + suffix)
            if f.is_file():
                shutil.copy2(f, scen_dir / f.name)
                copied.append(f.name)
        return copied

    def session_roots(self, home: Path) -> list[Path]:
        # the store copied beside home/ (agentlog takes the -wal and -shm beside it)
        return [home.parent / self.store]


class KiloAdapter(OpenCodeAdapter):
    """Kilo CLI (an OpenCode fork): ``kilo run --format json`` with a provider in
    ``~/.config/kilo/kilo.json``. Sessions go to ``~/.local/share/kilo/kilo.db``."""

    config_dir = "kilo"
    config_file = "kilo.json"
    schema = "https://app.kilo.ai/config.json"
    env_prefix = "KILO"
    store = "kilo.db"

    def env(self, home: Path, exe: Path, base_url: str) -> dict:
        e = super().env(home, exe, base_url)
        e.update({"KILO_TELEMETRY_LEVEL": "off", "KILO_DISABLE_SESSION_INGEST": "1", "KILO_NO_DAEMON": "1",
                  "KILO_DISABLE_PRESENCE": "1", "KILO_DISABLE_CODEBASE_INDEXING": "1"})
        return e


ADAPTERS = {"claude": ClaudeAdapter(), "codex": CodexAdapter(), "gemini": GeminiAdapter(), "copilot": CopilotAdapter(),
            "opencode": OpenCodeAdapter(), "kilo": KiloAdapter()}


def _load_adapter_modules() -> None:
    """The agents added as modules of their own: ``adapters/<name>.py`` defines ``register(h)``,
    which gets this module and returns the agent's ``AgentSpec`` and adapter. An adapter has the
    methods of the classes above (``unsupported``, ``prepare``, ``env``, ``argv``, ``session_id``,
    ``session_roots``) and may have these hooks: ``venv_python()`` (the interpreter a PyPI agent's
    venv is made with, when not this one), ``pip_args(version)`` (more arguments of its ``pip
    install``), ``scenario(name)`` (the agent's own version of a scenario, or None for the common
    one), ``session_files(home)`` (when its sessions are not ``*.jsonl`` files under its roots),
    ``after_run(home, project, scen_dir)`` (before the project directory is removed),
    ``warm_up(exe)``, ``expected_usage(entry)``, ``usage_keys()``, ``logged_call_id(call)``,
    ``side_usage(converted)``, ``logged_responses(served, raw)`` and ``record_lines(path)`` (see the
    functions of those names), and the attribute ``usage_per_response = False`` for an agent whose
    files hold only the session's usage totals (test_usage_per_response then skips,
    test_usage_totals checks)."""
    import importlib
    for path in sorted((HERE / "adapters").glob("*.py")):
        if path.stem.startswith("_"):
            continue
        spec, adapter = importlib.import_module(f"adapters.{path.stem}").register(sys.modules[__name__])
        AGENTS[spec.name] = spec
        ADAPTERS[spec.name] = adapter


_load_adapter_modules()
for _spec in AGENTS.values():
    ALL_SCENARIOS += [s for s in _spec.scenarios if s not in ALL_SCENARIOS]


def session_files(agent: str, home: Path) -> list[Path]:
    """The session files of a scenario: the JSONL files under the agent's roots, or the store's
    database file (not its -wal and -shm)."""
    hook = getattr(ADAPTERS[agent], "session_files", None)
    if hook:
        return hook(home)
    out = []
    for root in ADAPTERS[agent].session_roots(home):
        if AGENTS[agent].store:
            out += [root] if root.is_file() else []
        elif root.exists():
            out += sorted(p for p in root.rglob("*.jsonl") if p.is_file())
    return out


def store_files(db: Path) -> list[Path]:
    """A store's database file with its -wal and -shm, those that exist."""
    return [f for f in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")) if f.is_file()]


def store_query(db: Path, sql: str) -> list[tuple]:
    """Rows of a query on a copy of a store (database, -wal and -shm copied together into a
    temporary directory): opening the store itself would checkpoint its -wal into it."""
    with tempfile.TemporaryDirectory(prefix="agentlog-store-") as tmp:
        for f in store_files(db):
            shutil.copy2(f, Path(tmp) / f.name)
        con = sqlite3.connect(Path(tmp) / db.name)
        try:
            return con.execute(sql).fetchall()
        finally:
            con.close()


def _run(argv, env, cwd, stdin, timeout):
    """Run one agent process in its own process group; kill the group on timeout."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(stdin, timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        rc = "timeout"
    return rc, out, err, time.monotonic() - t0


_AIDER = threading.Lock()


def _run_alone(argv, env, cwd, stdin, timeout):
    """Runs Aider with no other Aider running, and returns only once the wall-clock second has
    changed. Aider's history names a run only by the second it writes its header in and the
    header's line (docs/src/agents/aider.md, Sessions): two scenarios whose headers fall in the same
    second write the same session id, and with the same scripted text, the same events, which
    agentlog cannot tell apart. Run one after another, each header falls in a later second."""
    with _AIDER:
        result = _run(argv, env, cwd, stdin, timeout)
        ended = int(time.time())
        while int(time.time()) <= ended:
            time.sleep(0.05)
        return result


def run_scenario(agent: str, version: str, exe: Path, name: str, out: Path, dump_requests: bool = False,
                 shared_home: bool = False) -> dict:
    """Runs one scenario into ``out/<agent>-<version>/<scenario>/``. With ``shared_home`` the
    agent's HOME is ``out/<agent>-<version>/home``, kept from one scenario to the next (the
    scenario's ``home`` is a link to it), so that the scenarios run one after another write into
    the same store."""
    adapter = ADAPTERS[agent]
    scen = scenario(agent, name)
    scen_dir = out / f"{agent}-{version}" / name
    if scen_dir.exists():
        shutil.rmtree(scen_dir)
    scen_dir.mkdir(parents=True)
    home = scen_dir / "home"
    if shared_home:
        (scen_dir.parent / "home").mkdir(exist_ok=True)
        home.symlink_to(Path("..") / "home", target_is_directory=True)
    else:
        home.mkdir()
    reason = scen.unsupported or adapter.unsupported(name, exe)
    if reason:
        (scen_dir / "ledger.json").write_text(json.dumps({"meta": {"agent": agent, "version": version, "scenario": name,
                                                                   "unsupported": reason}, "entries": []}, indent=1))
        return {"agent": agent, "version": version, "scenario": name, "status": "unsupported: " + reason, "files": []}
    project = Path(tempfile.mkdtemp(prefix=f"agentlog-{agent}-{name}-"))
    (project / "README.md").write_text("# sample project\n\nA small project for agentlog's agent tests.\n")
    (project / "hello.py").write_text('print("hello")\n')
    image = project / "red-square.png"
    image.write_bytes(tiny_png())
    script = dict(scen.script, name=name)
    if agent == "copilot":
        # GitHub Copilot's own API streams reasoning as `reasoning_text`; Copilot CLI 1.0.20 reads
        # only that field, 1.0.102 also `reasoning_content`
        script.setdefault("chat_reasoning_field", "reasoning_text")
    srv = model_server.ModelServer(script, str(scen_dir / "ledger.json"), idle_timeout=max(60.0, AGENT_TIMEOUT),
                                   max_lifetime=AGENT_TIMEOUT * (len(scen.invocations) + 1),
                                   dump_dir=str(scen_dir / "requests") if dump_requests else None,
                                   run_id=f"{agent}-{version}-{name}")
    srv.start()
    invocations = []
    first_session = None
    try:
        adapter.prepare(home, project, srv.base_url, scen)
        env = adapter.env(home, exe, srv.base_url)
        for i, inv in enumerate(scen.invocations):
            if inv.mode == "resume" and not first_session:
                invocations.append({"index": i, "prompt": inv.prompt, "kind": inv.kind, "mode": inv.mode,
                                    "exit": "no session id to resume", "stdout_tail": "", "stderr_tail": ""})
                break
            argv, stdin = adapter.argv(exe, inv, first_session, image)
            srv.ledger.note(current_invocation=i)
            run = _run_alone if agent == "aider" else _run
            rc, stdout, stderr, secs = run(argv, env, str(project), stdin, AGENT_TIMEOUT)
            sid = adapter.session_id(stdout, stderr, home)
            if first_session is None:
                first_session = sid
            shown = [Path(argv[0]).name] + argv[1:]
            if inv.image:
                shown += ["< stream-json user message with image"]
            elif inv.stdin:
                shown += ["< the prompt"]
            invocations.append({"index": i, "prompt": inv.prompt, "kind": inv.kind, "mode": inv.mode,
                                "image": inv.image, "stdin": inv.stdin, "argv": shown,
                                "exit": rc, "seconds": round(secs, 2), "session_id": sid,
                                "stdout_tail": stdout[-3000:], "stderr_tail": stderr[-3000:]})
            srv.ledger.note(invocations=invocations)
            if rc != 0:
                break
    finally:
        srv.stop()
        if hasattr(adapter, "after_run"):
            adapter.after_run(home, project, scen_dir)
        shutil.rmtree(project, ignore_errors=True)
    if AGENTS[agent].store:
        srv.ledger.note(store_files=adapter.collect(home, scen_dir))
    files = session_files(agent, home)
    srv.ledger.note(agent=agent, version=version, scenario=name, project=str(project), home=str(home),
                    session_roots=[str(r) for r in adapter.session_roots(home)],
                    session_files=[str(f.relative_to(scen_dir)) for f in files],
                    typed=[{"text": i.prompt, "kind": i.kind, "image": i.image, "stdin": i.stdin}
                           for i in scen.invocations],
                    remaining_steps=srv.script.remaining(), invocations=invocations)
    if shared_home:
        srv.ledger.note(shared_home=str(scen_dir.parent / "home"))
    # a slash command that reached the model as a prompt: the version has no such command in its
    # non-interactive mode (Copilot CLI 1.0.20 and older with /compact)
    sent = [i.prompt for i in scen.invocations if i.kind == "command"
            and any(e["channel"] == "main" and (e.get("last_user_text") or "").lstrip().startswith(i.prompt)
                    for e in srv.ledger.entries)]
    if sent:
        reason = f"{', '.join(sent)} is sent to the model as a prompt: this version has no such command in -p mode"
        srv.ledger.note(unsupported=reason)
        return {"agent": agent, "version": version, "scenario": name, "status": "unsupported: " + reason,
                "files": [str(f.relative_to(scen_dir)) for f in files]}
    status = "ok" if invocations and all(i["exit"] == 0 for i in invocations) and len(invocations) == len(scen.invocations) \
        else "exit " + ",".join(str(i["exit"]) for i in invocations)
    unscripted = [e for e in srv.ledger.entries if e.get("unscripted")]
    if unscripted:
        status += f" ({len(unscripted)} unscripted)"
    left = {k: v for k, v in srv.script.remaining().items() if v}
    if left:
        status += f" (steps left: {left})"
    return {"agent": agent, "version": version, "scenario": name, "status": status,
            "files": [str(f.relative_to(scen_dir)) for f in files]}


def cmd_run(a) -> int:
    ClaudeAdapter.lean = a.lean
    agents = list(AGENTS) if a.agent == "all" else a.agent.split(",")
    unknown = [ag for ag in agents if ag not in AGENTS]
    if unknown:
        print(f"unknown agent(s): {', '.join(unknown)} (known: {', '.join(AGENTS)})", file=sys.stderr)
        return 2
    out = Path(a.out).resolve()
    jobs = []  # each job: scenarios run one after another
    for ag in agents:
        spec = AGENTS[ag]
        names = list(spec.scenarios) if a.scenario == "all" else a.scenario.split(",")
        version = resolve_version(spec, a.version)
        exe = install(spec, version)
        warm_up(ag, exe)
        if a.shared_home:
            if not a.keep_home:
                shutil.rmtree(out / f"{ag}-{version}" / "home", ignore_errors=True)
            jobs.append([(ag, version, exe, n) for n in names])
        else:
            jobs += [[(ag, version, exe, n)] for n in names]

    def run_job(job):
        return [run_scenario(ag, v, exe, n, out, a.dump_requests, a.shared_home) for ag, v, exe, n in job]

    rows = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        futs = [pool.submit(run_job, job) for job in jobs]
        for f in futs:
            rows += f.result()
    print("| agent | version | scenario | exit status | session files written |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['agent']} | {r['version']} | {r['scenario']} | {r['status']} | "
              f"{'<br>'.join(r['files']) or '-'} |")
    return 0 if all(r["status"] == "ok" or r["status"].startswith("unsupported") for r in rows) else 1


# ---------------------------------------------------------------------------
# converting and analysing (shared with test_agents.py)


def agentlog_bin() -> Path:
    b = os.environ.get("AGENTLOG_BIN") or "target/debug/agentlog"
    p = Path(b)
    return p if p.is_absolute() else (REPO / p)


def agentlog(*args, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([str(agentlog_bin()), *map(str, args)], capture_output=True, text=True, timeout=timeout)


_readers: dict = {}


def agentlog_reads(agent: str) -> bool:
    """Whether the agentlog binary has a reader for the agent: the agent's short name (``claude``,
    ``opencode``, ...) is a value of ``convert --from`` (the readers of the SQLite stores came
    later than the others)."""
    name = AGENTS[agent].name
    key = (str(agentlog_bin()), name)
    if key not in _readers:
        if not agentlog_bin().exists():
            return False
        p = agentlog("convert", "--help")
        # the --from option's part of the help, up to the next option (--agent lists agents too)
        m = re.search(r"^\s+(?:-\w, )?--from\b.*?(?=^\s+(?:-\w, )?--[a-z]|\Z)", p.stdout, re.M | re.S)
        values = m.group(0) if m and p.returncode == 0 else ""
        _readers[key] = bool(re.search(rf"^\s*-\s*{re.escape(name)}:", values, re.M)
                             or re.search(rf"possible values:[^\]]*\b{re.escape(name)}\b", values))
    return _readers[key]


def file_digests(files: list[Path]) -> dict:
    """SHA-256 of each file, by name."""
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}


@dataclass
class Converted:
    scen_dir: Path
    ledger: dict
    files: list[Path]
    events: list[dict]
    report: dict
    convert_rc: int
    convert_stderr: str
    unified: Path
    store_before: dict = field(default_factory=dict)  # SQLite stores: digests of the files before ...
    store_after: dict = field(default_factory=dict)   # ... and after converting them


def load_ledger(scen_dir: Path) -> dict:
    return json.loads((scen_dir / "ledger.json").read_text())


def convert(scen_dir: Path, work: Path) -> Converted:
    """Convert a scenario's session files to unified JSONL, with a report."""
    ledger = load_ledger(scen_dir)
    agent = ledger["meta"]["agent"]
    home = scen_dir / "home"
    files = session_files(agent, home)
    roots = [r for r in ADAPTERS[agent].session_roots(home) if r.exists()]
    work.mkdir(parents=True, exist_ok=True)
    unified = work / "unified.jsonl"
    report_path = work / "report.json"
    if not roots:
        return Converted(scen_dir, ledger, files, [], {}, -1, "no session directory", unified)
    store = [f for db in files for f in store_files(db)] if AGENTS[agent].store else []
    before = file_digests(store)
    p = agentlog("convert", *roots, "--to", "unified", "-o", unified, "--report", report_path, "--color", "never")
    events = []
    if unified.exists():
        events = [json.loads(l) for l in unified.read_text().splitlines() if l.strip()]
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    return Converted(scen_dir, ledger, files, events, report, p.returncode, p.stderr, unified,
                     before, file_digests([f for f in store if f.exists()]))


def served_responses(ledger: dict) -> list[dict]:
    """Ledger entries that served a model response (not errors, not count_tokens or probes)."""
    return [e for e in ledger["entries"] if (e.get("response") or {}).get("status") == 200
            and "usage" in (e.get("response") or {})]


def is_title_request(e: dict) -> bool:
    """OpenCode's title request (its small model names a new session): served, but its usage is
    stored nowhere."""
    return (e.get("system_head") or "").lstrip().startswith("You are a title generator")


def logged_responses(c: Converted) -> list[dict]:
    """Served responses the agent wrote into a session file: those whose id a file holds (found by
    plain text search). Gemini CLI does not write the API's ``responseId``, nor does Copilot CLI
    1.0.20 its ``apiCallId``, nor Aider any id: there a response of the chat (main thread and subagents) counts when
    its text or a tool call id is in a file (a ``gemini`` message / an ``assistant.message``);
    compression requests are not written; nor does OpenHands through litellm's Anthropic provider
    (litellm makes ids of its own). OpenCode and Kilo CLI store no response id either, but
    an assistant message (with its usage) for every response of a session: all responses count
    but OpenCode's title request."""
    served = served_responses(c.ledger)
    agent = c.ledger["meta"]["agent"]
    if AGENTS[agent].store:
        return [e for e in served if not is_title_request(e)]
    files = list(c.files)
    if agent == "openhands":
        # a conversation's events lie beside its base_state.json, one file each
        files += [f for state in c.files for f in sorted((state.parent / "events").glob("*.json"))]
    raw = "\n".join(f.read_text(errors="replace") for f in files)
    hook = getattr(ADAPTERS[agent], "logged_responses", None)
    if hook:
        return hook(served, raw)
    if agent in ("gemini", "aider") or (agent in ("copilot", "openhands")
                                        and not any(e["response"]["id"] in raw for e in served)):
        # no response id to look for: a response of the chat (not a compression) whose text or
        # tool call id the files hold
        return [e for e in served if e["channel"] in ("main", "subagent") and _mentioned(e, raw)]
    return [e for e in served if e["response"]["id"] in raw]


def _mentioned(e: dict, raw: str) -> bool:
    r = e["response"]
    if r.get("text") and json.dumps(r["text"])[1:-1] in raw:
        return True
    # Aider's Markdown chat history holds the answer as it is
    if r.get("text") and r["text"].strip() in raw:
        return True
    return any(c["id"] in raw for c in r.get("tool_calls") or [])


def expected_usage(agent: str, e: dict) -> dict:
    """The unified usage counts a served response should become, from the agent's own accounting of
    what the API reported (the unified counts never overlap; reasoning is part of output)."""
    hook = getattr(ADAPTERS[agent], "expected_usage", None)
    if hook:
        return hook(e)
    served = e["response"]["usage"]
    if agent == "gemini":
        # usageMetadata: promptTokenCount includes cachedContentTokenCount; thoughtsTokenCount is
        # beside candidatesTokenCount (Gemini CLI logs them as tokens.input, .cached, .output, .thoughts)
        thoughts = served.get("thoughtsTokenCount", 0)
        return {"input_tokens": served["promptTokenCount"] - served["cachedContentTokenCount"]
                + served.get("toolUsePromptTokenCount", 0),
                "cache_read_tokens": served["cachedContentTokenCount"],
                "output_tokens": served["candidatesTokenCount"] + thoughts, "reasoning_tokens": thoughts}
    if agent == "copilot":
        # Chat Completions: prompt_tokens includes cached_tokens, completion_tokens includes
        # reasoning_tokens (Copilot CLI logs inputTokens, cacheReadTokens, outputTokens, reasoningTokens)
        cached = served["prompt_tokens_details"]["cached_tokens"]
        return {"input_tokens": served["prompt_tokens"] - cached, "cache_read_tokens": cached,
                "output_tokens": served["completion_tokens"],
                "reasoning_tokens": served["completion_tokens_details"]["reasoning_tokens"]}
    if AGENTS[agent].store:
        # message.data.tokens: input is fresh input, reasoning is beside output; cache writes exist
        # on the Anthropic API only, reasoning counts on Chat Completions only (stored as 0 otherwise)
        if e.get("api") == "openai-chat-completions":
            cached = served["prompt_tokens_details"]["cached_tokens"]
            return {"input_tokens": served["prompt_tokens"] - cached, "cache_read_tokens": cached,
                    "cache_write_tokens": 0, "output_tokens": served["completion_tokens"],
                    "reasoning_tokens": served["completion_tokens_details"]["reasoning_tokens"]}
        return {"input_tokens": served["input_tokens"], "cache_read_tokens": served["cache_read_input_tokens"],
                "cache_write_tokens": served["cache_creation_input_tokens"], "output_tokens": served["output_tokens"],
                "reasoning_tokens": 0}
    k = e["response"]["usage_k"]
    u = model_server.usage_for(k, reasoning=bool(e["response"].get("thinking")))
    if agent == "claude":
        return {"input_tokens": u["input_tokens"], "cache_read_tokens": u["cache_read_input_tokens"],
                "cache_write_tokens": u["cache_creation_input_tokens"], "output_tokens": u["output_tokens"]}
    return {"input_tokens": u["input_tokens"], "cache_read_tokens": u["cache_read_input_tokens"],
            "output_tokens": u["output_tokens"], "reasoning_tokens": u["reasoning_tokens"]}


def usage_keys(agent: str) -> list[str]:
    """The unified usage counts an agent's files give per response."""
    hook = getattr(ADAPTERS[agent], "usage_keys", None)
    if hook:
        return hook()
    if AGENTS[agent].store:
        return ["input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens"]
    return ["input_tokens", "cache_read_tokens", "output_tokens"] + (
        ["cache_write_tokens"] if agent == "claude" else ["reasoning_tokens"])


def logged_call_id(agent: str, call: dict) -> str:
    """The id under which the agent logs a tool call the server served: Gemini CLI prefixes the
    API's call id with the tool's name and two underscores (``run_shell_command__<id>``)."""
    hook = getattr(ADAPTERS[agent], "logged_call_id", None)
    if hook:
        return hook(call)
    return f"{call['name']}__{call['id']}" if agent == "gemini" else call["id"]


def side_usage(c: Converted) -> tuple[list[dict], list[dict]]:
    """Side requests (summaries) whose usage the files hold without a response id, summed on a
    record of the agent's own (pi 1.x ``compaction`` and ``branch_summary`` entries): the served
    responses, and the usage events that hold them; none unless the agent's adapter has a
    ``side_usage(c)`` hook."""
    hook = getattr(ADAPTERS[c.ledger["meta"]["agent"]], "side_usage", None)
    return hook(c) if hook else ([], [])


def record_lines(agent: str, f: Path) -> list[int]:
    """The lines of a session file where its records start: every non-empty line of a JSON Lines
    file, or what the agent's adapter says for a pretty-printed document
    (``record_lines(path)``)."""
    hook = getattr(ADAPTERS[agent], "record_lines", None)
    if hook:
        return hook(f)
    with open(f, "rb") as fh:
        return [i for i, l in enumerate(fh, 1) if l.strip()]


def usage_events(events: list[dict]) -> list[dict]:
    return [ev for ev in events if ev["kind"] == "meta" and ev["payload"].get("meta_type") == "usage"
            and not ev.get("copied")]


def typed_prompts(ledger: dict) -> list[dict]:
    return ledger["meta"].get("typed") or []


def user_messages(events: list[dict]) -> list[dict]:
    return [ev for ev in events if ev["kind"] == "message" and ev["payload"]["role"] == "user"]


def says(ev: dict, text: str) -> bool:
    """A message event's text is ``text``, or one of its text parts is (Codex puts an attached
    image's ``<image ...>`` wrapper in text parts of their own before the prompt). The text may be
    in double quotes: OpenCode's and Kilo CLI's ``run`` wraps each argument that holds a space in
    them, and sends and stores the prompt so."""
    p = ev["payload"]
    texts = [p.get("text")] + [pt.get("text") for pt in p.get("parts") or [] if pt.get("type") == "text"]
    quoted = '"' + text.replace('"', '\\"') + '"'
    return any((t or "").strip() in (text, quoted) for t in texts)


def summarize(scen_dir: Path, work: Path) -> dict:
    """One row of the table."""
    c = convert(scen_dir, work)
    meta = c.ledger["meta"]
    if meta.get("unsupported"):
        return {"agent": meta["agent"], "version": meta["version"], "scenario": meta["scenario"],
                "note": "unsupported: " + meta["unsupported"]}
    agent = meta["agent"]
    if AGENTS[agent].store:
        # rows of the session, message and part tables
        lines = sum(store_query(f, "SELECT (SELECT count(*) FROM session) + (SELECT count(*) FROM message)"
                                   " + (SELECT count(*) FROM part)")[0][0] for f in c.files)
    else:
        lines = sum(len(record_lines(agent, f)) for f in c.files)
    typed = [t["text"] for t in typed_prompts(c.ledger) if t["kind"] == "message"]
    found = sum(1 for t in typed if any(says(ev, t) and not ev.get("injected") for ev in user_messages(c.events)))
    logged = logged_responses(c) + side_usage(c)[0]
    served_in = sum(expected_usage(agent, e)["input_tokens"] for e in logged)
    served_out = sum(expected_usage(agent, e)["output_tokens"] for e in logged)
    ue = usage_events(c.events)
    conv_in = sum((ev["payload"]["usage"] or {}).get("input_tokens") or 0 for ev in ue)
    conv_out = sum((ev["payload"]["usage"] or {}).get("output_tokens") or 0 for ev in ue)
    unknown = [ev for ev in c.events if ev["kind"] == "meta" and ev["payload"].get("meta_type") == "unknown"]
    served_calls = sum(len(e["response"].get("tool_calls") or []) for e in served_responses(c.ledger))
    calls = sum(1 for ev in c.events if ev["kind"] == "tool_call" and not ev.get("copied"))
    return {"agent": agent, "version": meta["version"], "scenario": meta["scenario"], "lines": lines,
            "events": len(c.events), "typed": f"{found}/{len(typed)}", "tool_calls": f"{calls}/{served_calls}",
            "usage_in": f"{served_in}/{conv_in}", "usage_out": f"{served_out}/{conv_out}",
            "unknown": len(unknown),
            "unknown_types": sorted({(ev["source"].get("record_type") or "?") for ev in unknown}),
            "convert_rc": c.convert_rc}


def cmd_table(a) -> int:
    if a.bin:
        os.environ["AGENTLOG_BIN"] = a.bin
    root = Path(a.dir).resolve()
    if not agentlog_bin().exists():
        print(f"agentlog binary not found: {agentlog_bin()} (set AGENTLOG_BIN or --bin)", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory(prefix="agentlog-table-") as tmp:
        for ledger in sorted(root.glob("*/*/ledger.json")):
            scen_dir = ledger.parent
            rows.append(summarize(scen_dir, Path(tmp) / scen_dir.parent.name / scen_dir.name))
    print("| agent | version | scenario | lines (SQLite: rows) | events | typed prompts not injected "
          "| tool calls (converted/served) "
          "| input tokens (served/converted) | output tokens (served/converted) | unknown events |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "note" in r:
            print(f"| {r['agent']} | {r['version']} | {r['scenario']} | {r['note']} | | | | | | |")
            continue
        unk = str(r["unknown"]) + (f" ({', '.join(r['unknown_types'])})" if r["unknown"] else "")
        print(f"| {r['agent']} | {r['version']} | {r['scenario']} | {r['lines']} | {r['events']} | {r['typed']} "
              f"| {r['tool_calls']} | {r['usage_in']} | {r['usage_out']} | {unk} |")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Run real coding agents against agentlog's scripted model server.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="install the agents, run the scenarios, write session files and ledgers")
    r.add_argument("--agent", default="all", help=f"all, or a comma-separated list of: {', '.join(AGENTS)}")
    r.add_argument("--version", default="pinned", help="pinned (default), newest, or X.Y.Z")
    r.add_argument("--scenario", default="all",
                   help=f"all (each agent's own), or a comma-separated list of: {', '.join(ALL_SCENARIOS)}")
    r.add_argument("--out", required=True, help="output directory")
    r.add_argument("--jobs", type=int, default=2, help="scenarios run side by side (default 2)")
    r.add_argument("--dump-requests", action="store_true", help="also keep every request body under <scenario>/requests/")
    r.add_argument("--lean", action="store_true",
                   help="Claude Code with only the Bash and Agent tools and a short system prompt (smaller files)")
    r.add_argument("--shared-home", action="store_true",
                   help="one HOME per agent for all its scenarios, run one after another: OpenCode's and Kilo "
                        "CLI's store then holds the sessions of every scenario run so far")
    r.add_argument("--keep-home", action="store_true",
                   help="with --shared-home: keep the HOME an earlier run into the same --out left, so that "
                        "this run's sessions land in the same store as the earlier ones")
    t = sub.add_parser("table", help="convert a run's session files with agentlog and print a Markdown table")
    t.add_argument("dir")
    t.add_argument("--bin", help="agentlog binary (default $AGENTLOG_BIN or target/debug/agentlog)")
    sub.add_parser("list", help="print the agents, their pinned versions and the scenarios")
    a = ap.parse_args(argv)
    if a.cmd == "run":
        return cmd_run(a)
    if a.cmd == "table":
        return cmd_table(a)
    for s in AGENTS.values():
        print(f"{s.name}: {s.registry} {s.package}@{s.pinned}; scenarios: {' '.join(s.scenarios)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
