"""OpenHands CLI (PyPI ``openhands``): ``openhands --headless --json --override-with-envs -t TASK`` with
``LLM_BASE_URL`` pointing at the server's Chat Completions API (litellm's ``openai/<model>``).

It keeps each conversation in ``~/.openhands/conversations/<id>/``: ``base_state.json`` (the
agent's settings and the usage it counted, per response) and ``events/event-NNNNN-<uuid>.json``,
one file per event. agentlog reads a conversation from its ``base_state.json``.

OpenHands needs Python 3.12 (1.16.0 says ``==3.12.*``; its code uses 3.12 syntax): the venv is
made with the first of ``$AGENTLOG_OPENHANDS_PYTHON``, ``python3.12``, ``python3.13`` on PATH, or
a Python 3.13 under ``/opt/agentlog-python3.13`` (built from CPython's source where the system has
only 3.11), and pip is told to ignore the ``==3.12.*`` pin when it is not 3.12.
"""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

MODEL = "gpt-4.1"
ANTHROPIC_MODEL = "anthropic/claude-sonnet-4-5"
SCENARIOS = ("text", "reasoning", "tools", "tools-anthropic", "two-turns", "resume", "api-error")
LOCKED = {"1.16.0": ["opentelemetry-api==1.39.1", "opentelemetry-sdk==1.39.1", "opentelemetry-proto==1.39.1",
                      "opentelemetry-exporter-otlp-proto-common==1.39.1",
                      "opentelemetry-exporter-otlp-proto-grpc==1.39.1",
                      "opentelemetry-exporter-otlp-proto-http==1.39.1", "opentelemetry-instrumentation==0.60b1",
                      "opentelemetry-instrumentation-threading==0.60b1",
                      "opentelemetry-semantic-conventions==0.60b1", "lmnr==0.7.49", "litellm==1.83.14"]}
PYTHONS = ("python3.12", "python3.13", "/opt/agentlog-python3.13/bin/python3.13")


def _python() -> str | None:
    """The first interpreter of 3.12 or later found."""
    for cand in [os.environ.get("AGENTLOG_OPENHANDS_PYTHON")] + list(PYTHONS):
        if not cand:
            continue
        exe = shutil.which(cand) or (cand if Path(cand).is_file() else None)
        if not exe:
            continue
        out = subprocess.run([exe, "-c", "import sys; print(sys.version_info[:2] >= (3, 12))"],
                             capture_output=True, text=True)
        if out.stdout.strip() == "True":
            return exe
    return None


def _version(exe: Path) -> tuple:
    """The version of the install an executable lies in (``…/openhands-1.16.0/venv/bin/openhands``)."""
    m = re.search(r"openhands-(\d+)\.(\d+)", str(exe))
    return (int(m.group(1)), int(m.group(2))) if m else (99, 0)


def register(h):
    def shell(command: str, output: str, failed: bool, exit_code: int) -> dict:
        # the terminal tool, with the security_risk argument the CLI's LLM security analyzer asks for
        call = h.shell(command, output, failed, exit_code)
        return dict(call, name="terminal", input={"command": command, "security_risk": "LOW"})

    class OpenHandsAdapter:
        configs: dict = {}

        def venv_python(self) -> str | None:
            return _python()

        def pip_args(self, version: str) -> list[str]:
            args = []
            python = _python()
            if python and subprocess.run([python, "-c", "import sys; sys.exit(sys.version_info[:2] != (3, 12))"]
                                         ).returncode != 0:
                args.append("--ignore-requires-python")
            # without these (the versions of the CLI's uv.lock at 1.16.0) pip backtracks through
            # opentelemetry's releases for many minutes
            return args + (LOCKED.get(version) or [])

        def unsupported(self, name: str, exe: Path | None = None) -> str | None:
            return None

        def scenario(self, name: str):
            p = f"[{name}]"
            if name == "tools":
                return h.Scenario(name, {"main": [
                    {"text": "I will run two commands.", "tool_calls": [shell("echo hello", "hello", False, 0)]},
                    {"tool_calls": [shell("ls /nonexistent", "No such file or directory", True, 2)]},
                    {"text": "The echo printed hello and the ls failed because the path does not exist."},
                ]}, [h.Invocation(f"{p} Run echo hello, then list /nonexistent.")])
            if name == "resume":
                return h.Scenario(name, {"main": [
                    {"text": "Starting.", "tool_calls": [shell("echo resumed-session", "resumed-session", False, 0)]},
                    {"text": "Done for now."},
                    {"text": "Welcome back: the earlier command printed resumed-session."},
                ]}, [h.Invocation(f"{p} Run a command and stop."),
                     h.Invocation(f"{p} Pick up where we left off.", mode="resume")])
            if name == "tools-anthropic":
                # the same through litellm's Anthropic provider: Messages requests, cache writes
                base = self.scenario("tools")
                invs = [h.Invocation(i.prompt.replace("[tools]", p, 1)) for i in base.invocations]
                return h.Scenario(name, base.script, invs, {"model": ANTHROPIC_MODEL})
            return None

        def expected_usage(self, e: dict) -> dict:
            # litellm's prompt_tokens holds the cache reads (and, from Anthropic, the cache writes);
            # OpenHands keeps it so, beside cache_read_tokens and cache_write_tokens
            u = h.model_server.usage_for(e["response"]["usage_k"], reasoning=bool(e["response"].get("thinking")))
            anthropic = e.get("api") == "anthropic-messages"
            return {"input_tokens": u["input_tokens"], "cache_read_tokens": u["cache_read_input_tokens"],
                    "cache_write_tokens": u["cache_creation_input_tokens"] if anthropic else 0,
                    "output_tokens": u["output_tokens"], "reasoning_tokens": 0 if anthropic else u["reasoning_tokens"]}

        def usage_keys(self) -> list[str]:
            return ["input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens"]

        def prepare(self, home: Path, project: Path, base_url: str, scen) -> None:
            (home / ".openhands").mkdir(parents=True, exist_ok=True)
            # by HOME: scenarios run side by side share this adapter
            self.configs[home] = scen.config

        def env(self, home: Path, exe: Path, base_url: str) -> dict:
            e = h.base_env(home, exe)
            e.update({
                "LLM_API_KEY": "test", "LLM_BASE_URL": base_url + "/v1", "LLM_MODEL": f"openai/{MODEL}",
                # litellm's model table from the package, not fetched
                "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                # anything that is not the server (the CLI's version check on PyPI) fails at once
                "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
                "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
                "OPENHANDS_SUPPRESS_BANNER": "1",
            })
            model = self.configs.get(home, {}).get("model")
            if _version(exe) < (1, 16):
                # before 1.16 --headless needs the settings an interactive first run saves
                # ("Headless mode requires existing settings"); the environment still overrides them
                llm = {"model": model or f"openai/{MODEL}", "api_key": "test",
                       "base_url": base_url if model else base_url + "/v1", "usage_id": "agent"}
                agent = {"kind": "Agent", "llm": llm,
                         "tools": [{"name": t, "params": {}} for t in ("terminal", "file_editor", "task_tracker")]}
                (home / ".openhands" / "agent_settings.json").write_text(json.dumps(agent))
            if model:
                # litellm's Anthropic provider adds /v1/messages to the base URL
                e.update({"LLM_MODEL": model, "LLM_BASE_URL": base_url})
            return e

        def argv(self, exe: Path, inv, first_session: str | None, image: Path | None) -> tuple[list, str | None]:
            a = [str(exe), "--headless", "--json", "--override-with-envs", "--always-approve"]
            if inv.mode == "continue":
                a += ["--resume", "--last"]
            elif inv.mode == "resume":
                a += ["--resume", first_session]
            return a + ["-t", inv.prompt], None

        _ID = re.compile(r"Conversation ID: ([0-9a-f]{32})")

        def session_id(self, stdout: str, stderr: str = "", home: Path | None = None) -> str | None:
            m = self._ID.search(stdout) or self._ID.search(stderr)
            if m:
                return m.group(1)
            states = sorted((home / ".openhands" / "conversations").glob("*/base_state.json"),
                            key=lambda f: f.stat().st_mtime) if home else []
            return states[-1].parent.name if states else None

        def session_roots(self, home: Path) -> list[Path]:
            return [home / ".openhands" / "conversations"]

        def session_files(self, home: Path) -> list[Path]:
            # a conversation is read from its base_state.json (its events/ beside it)
            root = home / ".openhands" / "conversations"
            return sorted(root.glob("*/base_state.json")) if root.exists() else []

    spec = h.AgentSpec("openhands", "openhands", "1.16.0", "openhands", "openhands", "openhands",
                       SCENARIOS, registry="pypi")
    return spec, OpenHandsAdapter()
