"""Qwen Code (npm ``@qwen-code/qwen-code``): ``qwen --yolo -o json -p`` in its OpenAI-compatible mode
(``security.auth.selectedType: "openai"``, ``OPENAI_BASE_URL`` pointing at the server's Chat Completions).

Sessions: ``~/.qwen/projects/<cwd, non-alphanumerics made '-'>/chats/<session>.jsonl``, subagent
transcripts in ``projects/<project>/subagents/<session>/agent-<agent id>.jsonl`` (with a ``.meta.json``).
See ``tests/agents/FINDINGS-qwen.md``."""
import json
from pathlib import Path

MODEL = "qwen3-coder-plus"

# offline: no telemetry, no update check, no tips; the background memory agents send model requests
# of their own after each turn (they would take scripted steps), so they are off
SETTINGS = {
    "security": {"auth": {"selectedType": "openai"}},
    "model": {"name": MODEL},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False},
    "ui": {"hideTips": True, "hideBanner": True},
    "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False, "enableAutoSkill": False},
}

SCENARIOS = ("text", "reasoning", "tools", "two-turns", "resume", "api-error", "subagent", "subagent-background",
             "compaction")


def register(h):
    class QwenAdapter:
        def unsupported(self, name, exe=None):
            return None

        def scenario(self, name):
            p = f"[{name}]"
            if name in ("subagent", "subagent-background"):
                # the `agent` tool; run_in_background defaults to true for top-level subagents, whose
                # result then comes back as a <task-notification> user record and one more main request
                background = name == "subagent-background"
                marker = "SUBTASK-B4C1" if background else "SUBTASK-7F3A"
                task = {"description": "Run a command", "subagent_type": "general-purpose",
                        "prompt": f"{marker}: run echo from-subagent and report what it printed."}
                if not background:
                    task["run_in_background"] = False
                main = [{"text": "I will delegate this.", "tool_calls": [{"name": "agent", "input": task}]},
                        {"text": "The subagent reported from-subagent."}]
                if background:
                    main.append({"text": "The background subagent finished: from-subagent."})
                return h.Scenario(name, {
                    "subagent_marker": marker,
                    "main": main,
                    "subagent": [{"tool_calls": [h.shell("echo from-subagent", "from-subagent", False, 0)]},
                                 {"text": "Subagent result: the command printed from-subagent."}],
                }, [h.Invocation(f"{p} Delegate a command to a subagent.")])
            if name == "tools":
                # the common scenario, but Qwen Code's shell tool now and then loses what a command
                # that exits at once wrote to stderr (its result reads `Output: (empty)` beside
                # `Exit Code: 2`): the failed command is told by its exit code line, which is there
                # either way
                return h.Scenario(name, {"main": [
                    {"text": "I will run two commands.", "tool_calls": [h.shell("echo hello", "hello", False, 0)]},
                    {"tool_calls": [h.shell("ls /nonexistent", "Exit Code: 2", True, 2)]},
                    {"text": "The echo printed hello and the ls failed because the path does not exist."},
                ]}, [h.Invocation(f"{p} Run echo hello, then list /nonexistent.")])
            if name == "compaction":
                # /compress works in -p mode: one summary request, then the next prompt on the summary
                snapshot = "<state_snapshot>\nSummary: the user asked to remember the word PELICAN.\n</state_snapshot>"
                return h.Scenario(name, {"main": [{"text": "Noted: PELICAN."}, {"text": "The word was PELICAN."}],
                                         "compact": [{"text": snapshot}]},
                                  [h.Invocation(f"{p} Remember the word PELICAN."),
                                   h.Invocation("/compress", mode="continue", kind="command"),
                                   h.Invocation(f"{p} Which word did I ask you to remember?", mode="continue")])
            # the common scenarios, as Gemini CLI runs them
            return h.scenario("gemini", name)

        def prepare(self, home, project, base_url, scen):
            (home / ".qwen").mkdir(parents=True, exist_ok=True)
            (home / ".qwen" / "settings.json").write_text(json.dumps(SETTINGS, indent=2))

        def env(self, home, exe, base_url):
            e = h.base_env(home, exe)
            e.update({"OPENAI_API_KEY": "test", "OPENAI_BASE_URL": base_url + "/v1", "OPENAI_MODEL": MODEL,
                      "QWEN_USAGE_STATISTICS_ENABLED": "0", "QWEN_TELEMETRY_ENABLED": "0", "NO_BROWSER": "true",
                      "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"})
            return e

        def argv(self, exe, inv, first_session, image):
            a = [str(exe), "--yolo", "-o", "json"]
            if inv.mode == "continue":
                a += ["--continue"]
            elif inv.mode == "resume":
                a += ["--resume", first_session]
            return a + ["-p", inv.prompt], None

        def session_id(self, stdout, stderr="", home=None):
            # -o json prints one JSON array of messages; the init and result messages name the session
            try:
                messages = json.loads(stdout[stdout.index("["):]) if "[" in stdout else []
            except ValueError:
                messages = []
            for m in messages if isinstance(messages, list) else [messages]:
                if isinstance(m, dict) and m.get("session_id"):
                    return m["session_id"]
            return None

        def session_roots(self, home):
            return [home / ".qwen" / "projects"]

        def expected_usage(self, e):
            # Chat Completions: prompt_tokens includes cached_tokens, completion_tokens includes
            # reasoning_tokens (Qwen Code logs them as prompt-, cachedContent-, candidates-, thoughtsTokenCount)
            served = e["response"]["usage"]
            cached = served["prompt_tokens_details"]["cached_tokens"]
            return {"input_tokens": served["prompt_tokens"] - cached, "cache_read_tokens": cached,
                    "output_tokens": served["completion_tokens"],
                    "reasoning_tokens": served["completion_tokens_details"]["reasoning_tokens"]}

    spec = h.AgentSpec("qwen", "@qwen-code/qwen-code", "0.24.4", "qwen", "qwen-code", "qwen-code", SCENARIOS)
    return spec, QwenAdapter()
