"""Factory Droid (`droid exec`) against the scripted server, through a bring-your-own-key model.

`droid exec` runs without a Factory login when the model is one of the user's own: a
`customModels` entry in `~/.factory/settings.json` with `provider: "anthropic"` and a `baseUrl`
sends streaming Anthropic Messages requests there (`-m custom:<model>`). The npm package
`@factory/cli` is a shim whose install script fetches the platform package; the harness installs
the platform package `@factory/cli-linux-x64` itself (its `droid` binary, no `bin` entry), since the
registry may lack the platform package of the shim's own version (0.225.1 has none; 0.225.2 does).

Sessions: `~/.factory/sessions/<cwd with / as ->/<session id>.jsonl`, beside it
`<session id>.settings.json` (model, autonomy, `tokenUsage` totals). The JSONL file holds no usage
and no response id: the session's usage is the `tokenUsage` of its settings file, one total for
all the responses of the session. So the usage checks here compare totals; the per-response
pairing does not apply (``usage_per_response = False``).
"""

from __future__ import annotations

import json
from pathlib import Path

MODEL = "claude-sonnet-4-5"


def _execute(command: str, output: str, failed: bool, exit_code: int, summary: str) -> dict:
    """A call of Droid's shell tool `Execute`, with what its output should say (the `shell`
    abstraction of the server names the tool `Bash` and gives no `summary`, which Droid requires)."""
    return {"name": "Execute", "input": {"command": command, "summary": summary, "riskLevel": "low",
                                         "riskLevelReason": "This command only prints text or lists a folder."},
            "expect_output": output, "expect_failed": failed}


def register(h):
    spec = h.AgentSpec("droid", "@factory/cli-linux-x64", "0.225.2", "@factory/cli-linux-x64/bin/droid",
                       "factory-droid", "factory-droid",
                       ("text", "reasoning", "tools", "two-turns", "resume", "fork", "subagent", "api-error"))

    class DroidAdapter:
        """Factory Droid: `droid exec -m custom:<model>` with a custom Anthropic model at the server."""

        usage_per_response = False

        def unsupported(self, name: str, exe: Path | None = None) -> str | None:
            if name == "subagent":
                # measured with 0.225.2: the Task call's output is "Error running task subagent:
                # Could not reach the daemon. It may still be starting."; Droid's log shows the
                # in-process daemon connection looking for the Factory user's credentials ("No
                # authentication credentials available"), and a made-up FACTORY_API_KEY with
                # Factory's API at the server does not get it further
                return ("Droid runs Task subagents through its daemon (`droid daemon`), which exec "
                        "does not reach offline: the call fails with \"Could not reach the daemon\"")
            return None

        def scenario(self, name: str):
            p = f"[{name}]"
            if name == "tools":
                return h.Scenario(name, {"main": [
                    {"text": "I will run two commands.",
                     "tool_calls": [_execute("echo hello", "hello", False, 0, "Print a short greeting now")]},
                    {"tool_calls": [_execute("ls /nonexistent", "No such file or directory", True, 2,
                                             "List a missing folder now")]},
                    {"text": "The echo printed hello and the ls failed because the path does not exist."},
                ]}, [h.Invocation(f"{p} Run echo hello, then list /nonexistent.")])
            if name == "resume":
                return h.Scenario(name, {"main": [
                    {"text": "Starting.",
                     "tool_calls": [_execute("echo resumed-session", "resumed-session", False, 0,
                                             "Print a marker line now")]},
                    {"text": "Done for now."},
                    {"text": "Welcome back: the earlier command printed resumed-session."},
                ]}, [h.Invocation(f"{p} Run a command and stop."),
                     h.Invocation(f"{p} Pick up where we left off.", mode="resume")])
            if name == "fork":
                # `exec --fork <id>` copies the session into a new one and goes on there
                return h.Scenario(name, {"main": [{"text": "Original answer."}, {"text": "Answer in the fork."}]},
                                  [h.Invocation(f"{p} Prompt of the original session."),
                                   h.Invocation(f"{p} Prompt of the fork.", mode="fork")])
            if name == "subagent":
                # the Task tool runs a built-in `worker` subagent in a session of its own; `await`
                # makes the call wait for its report (Task is offered from `--auto high` on)
                marker = "SUBTASK-7F3A"
                sub_prompt = f"{marker}: run echo from-subagent and report what it printed."
                return h.Scenario(name, {
                    "subagent_marker": marker,
                    "main": [{"text": "I will delegate this.",
                              "tool_calls": [{"name": "Task", "input": {
                                  "subagent_type": "worker", "description": "Run a command", "prompt": sub_prompt,
                                  "await": True}}]},
                             {"text": "The subagent reported from-subagent."}],
                    "subagent": [{"tool_calls": [_execute("echo from-subagent", "from-subagent", False, 0,
                                                          "Print the subagent marker now")]},
                                 {"text": "Subagent result: the command printed from-subagent."}],
                }, [h.Invocation(f"{p} Delegate a command to a subagent.")], config={"auto": "high"})
            return None

        def prepare(self, home: Path, project: Path, base_url: str, scen) -> None:
            factory = home / ".factory"
            factory.mkdir(parents=True, exist_ok=True)
            settings = {"customModels": [{"model": MODEL, "displayName": "Scripted", "baseUrl": base_url,
                                          "apiKey": "test", "provider": "anthropic", "maxOutputTokens": 4096}],
                        "allowSubagentsInScripts": True}
            self.auto = scen.config.get("auto", "low")
            (factory / "settings.json").write_text(json.dumps(settings, indent=1))

        def env(self, home: Path, exe: Path, base_url: str) -> dict:
            e = h.base_env(home, exe)
            # `exec -s <id>` first asks Factory's API for the session and goes on with the local
            # file only when the answer is 404: the server answers 404 to what it does not know
            e.update({"FACTORY_DISABLE_KEYRING": "1", "FACTORY_API_BASE_URL": base_url})
            return e

        def argv(self, exe: Path, inv, first_session: str | None, image: Path | None):
            a = [str(exe), "exec", "-o", "json", "-m", f"custom:{MODEL}", "--auto", getattr(self, "auto", "low")]
            if inv.mode in ("continue", "resume") and first_session:
                a += ["-s", first_session]
            elif inv.mode == "fork" and first_session:
                a += ["--fork", first_session]
            return a + [inv.prompt], None

        def session_id(self, stdout: str, stderr: str = "", home: Path | None = None) -> str | None:
            for d in reversed(list(h.json_lines(stdout))):
                if d.get("session_id"):
                    return d["session_id"]
            return None

        def session_roots(self, home: Path) -> list[Path]:
            return [home / ".factory" / "sessions"]

        def logged_responses(self, served: list[dict], raw: str) -> list[dict]:
            """The responses the session files hold: the JSONL names no response id, so those
            whose text or tool call id is in a file (as for Gemini CLI)."""
            return [e for e in served if e["channel"] in ("main", "subagent") and h._mentioned(e, raw)]

        def usage_keys(self) -> list[str]:
            return ["input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens"]

        def expected_usage(self, e: dict) -> dict:
            served = e["response"]["usage"]
            return {"input_tokens": served["input_tokens"], "cache_read_tokens": served["cache_read_input_tokens"],
                    "cache_write_tokens": served["cache_creation_input_tokens"],
                    "output_tokens": served["output_tokens"]}

    return spec, DroidAdapter()
