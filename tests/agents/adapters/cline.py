"""Cline CLI (npm ``cline``): ``cline --thinking low PROMPT`` (act mode, tools approved) with the
Anthropic provider in ``~/.cline/data/settings/providers.json`` pointing at the server.

The CLI keeps each session in ``~/.cline/data/sessions/<id>/``: ``<id>.messages.json`` (the
conversation, one JSON document rewritten whole), ``<id>.json`` (the session's manifest) and, once
the context was compacted, ``<id>.compaction.json``; ``~/.cline/data/db/sessions.db`` indexes
them. ``--id <id>`` resumes a session. The messages file names no response id of the API, so a
served response counts as logged when its text or a tool call id is in the file.

Its shell tool is ``run_commands`` (``{"commands": [...]}``), which the server does not know as an
abstract ``shell`` call: the scenarios that run commands name it.
"""

from __future__ import annotations

import json
from pathlib import Path

SCENARIOS = ("text", "reasoning", "tools", "tools-openai", "subagent", "two-turns", "resume", "api-error")
# --id resumes a session only in the interactive terminal UI: with a prompt and no TTY the CLI
# exits 1 with "interactive mode requires a TTY (stdin/stdout must both be terminals)", and with
# --json "JSON output mode requires a prompt argument or piped stdin (interactive mode is
# unsupported)". _cline_tty.py types the second prompt into the UI on a pseudo-terminal.
TTY = Path(__file__).resolve().parent / "_cline_tty.py"
MODEL = "claude-sonnet-4-5"
OPENAI_MODEL = "gpt-4.1"


def run_commands(command: str, output: str, failed: bool) -> dict:
    return {"name": "run_commands", "input": {"commands": [command]}, "expect_output": output,
            "expect_failed": failed}


def message_lines(path: Path) -> list[int]:
    """The lines of a ``.messages.json`` document where a record starts: line 1 (the document,
    with its header fields) and the line where each element of ``messages`` starts."""
    text = path.read_text(errors="replace")
    decoder = json.JSONDecoder()
    try:
        doc = json.loads(text)
    except ValueError:
        return [i for i, l in enumerate(text.splitlines(), 1) if l.strip()]
    lines = [1]
    if doc.get("messages"):
        # the array of the top-level key "messages": decode its elements one by one
        at = text.index("[", text.index('"messages"'))
        for _ in doc["messages"]:
            at += 1
            while text[at] in " \t\r\n,":
                at += 1
            lines.append(text.count("\n", 0, at) + 1)
            _, at = decoder.raw_decode(text, at)
            at -= 1
    return sorted(set(lines))


def register(h):
    class ClineAdapter:
        def unsupported(self, name: str, exe: Path | None = None) -> str | None:
            return None

        def scenario(self, name: str):
            p = f"[{name}]"
            if name == "subagent":
                # spawn_agent runs a sub-agent with the task and waits for its result
                marker = "SUBTASK-7F3A"
                task = f"{marker}: run echo from-subagent and report what it printed."
                return h.Scenario(name, {
                    "subagent_marker": marker,
                    "main": [{"text": "I will delegate this.",
                              "tool_calls": [{"name": "spawn_agent", "input": {
                                  "systemPrompt": "You run shell commands.", "task": task}}]},
                             {"text": "The subagent reported from-subagent."}],
                    "subagent": [{"tool_calls": [run_commands("echo from-subagent", "from-subagent", False)]},
                                 {"text": "Subagent result: the command printed from-subagent."}],
                }, [h.Invocation(f"{p} Delegate a command to a subagent.")])
            if name == "tools-openai":
                # the same commands through the OpenAI-compatible provider (Chat Completions)
                base = self.scenario("tools")
                invs = [h.Invocation(i.prompt.replace("[tools]", p, 1)) for i in base.invocations]
                return h.Scenario(name, base.script, invs, {"provider": "openai-compatible"})
            if name == "tools":
                return h.Scenario(name, {"main": [
                    {"text": "I will run two commands.",
                     "tool_calls": [run_commands("echo hello", "hello", False)]},
                    {"tool_calls": [run_commands("ls /nonexistent", "No such file or directory", True)]},
                    {"text": "The echo printed hello and the ls failed because the path does not exist."},
                ]}, [h.Invocation(f"{p} Run echo hello, then list /nonexistent.")])
            if name == "resume":
                return h.Scenario(name, {"main": [
                    {"text": "Starting.", "tool_calls": [run_commands("echo resumed-session", "resumed-session", False)]},
                    {"text": "Done for now."},
                    {"text": "Welcome back: the earlier command printed resumed-session."},
                ]}, [h.Invocation(f"{p} Run a command and stop."),
                     h.Invocation(f"{p} Pick up where we left off.", mode="resume")])
            return None

        def prepare(self, home: Path, project: Path, base_url: str, scen) -> None:
            settings = home / ".cline" / "data" / "settings"
            settings.mkdir(parents=True, exist_ok=True)
            # what `cline auth` writes, with a base URL it accepts only for OpenAI-compatible
            # providers on its command line; both providers append /messages or
            # /chat/completions to it
            provider = scen.config.get("provider", "anthropic")
            model = OPENAI_MODEL if provider == "openai-compatible" else MODEL
            (settings / "providers.json").write_text(json.dumps({
                "version": 1, "lastUsedProvider": provider, "modes": {},
                "providers": {provider: {
                    "settings": {"provider": provider, "apiKey": "test", "model": model,
                                 "baseUrl": base_url + "/v1"},
                    "updatedAt": "2026-11-27T00:00:00.000Z", "tokenSource": "manual"}}}, indent=2))

        def env(self, home: Path, exe: Path, base_url: str) -> dict:
            e = h.base_env(home, exe)
            # what --data-dir does: the state under ~/.cline/data, and no hub daemon (without it
            # the CLI starts one on 127.0.0.1:25463 that outlives the run and serves any HOME)
            data = str(home / ".cline" / "data")
            e.update({"CLINE_SANDBOX": "1", "CLINE_SANDBOX_DATA_DIR": data, "CLINE_DATA_DIR": data})
            return e

        def argv(self, exe: Path, inv, first_session: str | None, image: Path | None):
            # without --yolo a run ends with the model's answer (--yolo waits for submit_and_exit)
            a = [str(exe), "--thinking", "low"]
            if inv.mode in ("continue", "resume") and first_session:
                return [h.sys.executable, str(TTY), inv.prompt, *a, "--id", first_session], None
            return a + [inv.prompt], None

        def session_id(self, stdout: str, stderr: str = "", home: Path | None = None) -> str | None:
            files = sorted(self.session_files(home), key=lambda f: f.stat().st_mtime) if home else []
            return files[-1].name.removesuffix(".messages.json") if files else None

        def session_roots(self, home: Path) -> list[Path]:
            return [home / ".cline" / "data" / "sessions"]

        def session_files(self, home: Path) -> list[Path]:
            root = self.session_roots(home)[0]
            return sorted(root.rglob("*.messages.json")) if root.exists() else []

        def record_lines(self, path: Path) -> list[int]:
            return message_lines(path)

        def logged_responses(self, served: list[dict], raw: str) -> list[dict]:
            # no response id in the file: a response counts when its text or a tool call id is there
            return [e for e in served if e["channel"] in ("main", "subagent") and h._mentioned(e, raw)]

        def expected_usage(self, e: dict) -> dict:
            # metrics.inputTokens is the whole prompt (fresh input, cache reads and cache writes);
            # Chat Completions has no cache writes (written as 0)
            u = e["response"]["usage"]
            if e.get("api") == "openai-chat-completions":
                cached = u["prompt_tokens_details"]["cached_tokens"]
                return {"input_tokens": u["prompt_tokens"] - cached, "cache_read_tokens": cached,
                        "cache_write_tokens": 0, "output_tokens": u["completion_tokens"]}
            return {"input_tokens": u["input_tokens"], "cache_read_tokens": u["cache_read_input_tokens"],
                    "cache_write_tokens": u["cache_creation_input_tokens"], "output_tokens": u["output_tokens"]}

        def usage_keys(self) -> list[str]:
            return ["input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens"]

    spec = h.AgentSpec("cline", "cline", "3.0.65", "cline", "cline", "cline", SCENARIOS)
    return spec, ClineAdapter()
