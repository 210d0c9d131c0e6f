"""Aider (PyPI ``aider-chat``): ``aider --message`` against the server's OpenAI Chat Completions API.

Aider keeps its history in the project directory as Markdown (``.aider.chat.history.md``) and its
prompt history beside it (``.aider.input.history``). The project is removed after a run, so both
are written under the scenario's home with ``--chat-history-file`` and ``--input-history-file``.
Each ``aider --message`` is one run: a ``# aider chat started at`` header in the chat history.

Usage is only written as a rounded line, ``> Tokens: 1.3k sent, 50 received. Cost: ...``:
``expected_usage`` rounds what the server served the way Aider does (``aider/utils.py``
``format_tokens``), so the check compares the figures Aider could have written.
"""

from __future__ import annotations

from pathlib import Path

MODEL = "openai/gpt-4.1"
CHAT = ".aider.chat.history.md"
INPUT = ".aider.input.history"

# what a scripted answer looks like when it edits a file with a SEARCH/REPLACE block
EDIT_ANSWER = """I will change the greeting.

hello.py
```python
<<<<<<< SEARCH
print("hello")
=======
print("hello, agentlog")
>>>>>>> REPLACE
```
"""

SHELL_ANSWER = """Run this to see the greeting:

```bash
echo hello-from-aider
```
"""


def register(h):
    spec = h.AgentSpec("aider", "aider-chat", "0.86.2", "aider", "aider-chat", "aider",
                       ("text", "edit", "two-turns", "restore", "shell", "api-error"), registry="pypi")
    return spec, AiderAdapter(h)


def format_tokens(count: int) -> str:
    """Aider's rounding of a token count (aider/utils.py)."""
    if count < 1000:
        return f"{count}"
    if count < 10000:
        return f"{count / 1000:.1f}k"
    return f"{round(count / 1000)}k"


def as_written(count: int) -> int:
    """The count a reader gets back from what Aider writes for ``count``."""
    text = format_tokens(count)
    return round(float(text[:-1]) * 1000) if text.endswith("k") else int(text)


class AiderAdapter:
    def __init__(self, h):
        self.h = h

    def scenario(self, name: str):
        made = self._scenario(name)
        if made is not None:
            # Aider offers the model no tools: its requests are the session's own all the same
            made.script["main_without_tools"] = True
        return made

    def _scenario(self, name: str):
        h = self.h
        p = f"[{name}]"
        if name == "text":
            return h.Scenario(name, {"main": [{"text": "Hello from the scripted model. This is the text scenario."}]},
                              [h.Invocation(f"{p} Say hello to the test suite.")])
        if name == "api-error":
            err = {"status": 500, "type": "server_error", "message": "The server had an error."}
            # the OpenAI client litellm uses retries twice by itself: the third error reaches Aider,
            # which writes it to the chat history and retries
            return h.Scenario(name, {"main": [{"error": err}, {"error": err}, {"error": err},
                                              {"text": "Answer after one retry."}]},
                              [h.Invocation(f"{p} Answer despite a server error.")])
        if name == "edit":
            return h.Scenario(name, {"main": [{"text": EDIT_ANSWER}]},
                              [h.Invocation(f"{p} Change the greeting in hello.py.")])
        if name == "two-turns":
            return h.Scenario(name, {"main": [{"text": "First answer: noted."}, {"text": "Second answer: still here."}]},
                              [h.Invocation(f"{p} First prompt of two."),
                               h.Invocation(f"{p} Second prompt of two.", mode="continue")])
        if name == "restore":
            # the second run loads the first one's chat history (--restore-chat-history) and sends it
            return h.Scenario(name, {"main": [{"text": "Noted: PELICAN."}, {"text": "The word was PELICAN."}]},
                              [h.Invocation(f"{p} Remember the word PELICAN."),
                               h.Invocation(f"{p} Which word did I ask you to remember?", mode="resume")])
        if name == "shell":
            # Aider offers to run the answer's shell block; the answer to its question comes on stdin
            return h.Scenario(name, {"main": [{"text": SHELL_ANSWER}]},
                              [h.Invocation(f"{p} How do I print a greeting?", stdin=True)])
        raise KeyError(name)

    def unsupported(self, name: str, exe: Path | None = None) -> str | None:
        return None

    def prepare(self, home: Path, project: Path, base_url: str, scen) -> None:
        pass

    def env(self, home: Path, exe: Path, base_url: str) -> dict:
        e = self.h.base_env(home, exe)
        # litellm reads its model price map from the package, not from the network
        # (scenarios run side by side: what differs between them is passed here, not in argv)
        e.update({"LITELLM_LOCAL_MODEL_COST_MAP": "True", "OPENAI_API_KEY": "test",
                  "OPENAI_API_BASE": base_url + "/v1",
                  "AIDER_CHAT_HISTORY_FILE": str(home / CHAT), "AIDER_INPUT_HISTORY_FILE": str(home / INPUT)})
        return e

    def argv(self, exe: Path, inv, first_session: str | None, image: Path | None) -> tuple[list, str | None]:
        a = [str(exe), "--model", MODEL, "--no-git", "--no-check-update", "--analytics-disable",
             "--no-show-model-warnings", "--no-show-release-notes", "--no-pretty", "--map-tokens", "0",
             "--edit-format", "diff", "--no-stream", "--message", inv.prompt]
        if not inv.stdin:
            a.insert(1, "--yes-always")
        if inv.mode == "resume":
            a.insert(1, "--restore-chat-history")
        # a question Aider asks (run the shell command? add its output?) is answered on stdin
        return a, ("y\ny\n" if inv.stdin else None)

    def session_id(self, stdout: str, stderr: str = "", home: Path | None = None) -> str | None:
        return "aider-run"

    def session_roots(self, home: Path) -> list[Path]:
        return [home]

    def session_files(self, home: Path) -> list[Path]:
        return [f for f in (home / CHAT, home / INPUT) if f.is_file()]

    def usage_keys(self) -> list[str]:
        return ["input_tokens", "output_tokens"]

    def expected_usage(self, e: dict) -> dict:
        """What the ``> Tokens:`` line gives for a served response: ``sent`` is the prompt tokens,
        cached ones included (litellm gives Aider no cache hits for the OpenAI API, so none are
        written), ``received`` the completion tokens; both rounded."""
        u = e["response"]["usage"]
        return {"input_tokens": as_written(u["prompt_tokens"]), "output_tokens": as_written(u["completion_tokens"])}
