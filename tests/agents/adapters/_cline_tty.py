"""Types one prompt into Cline CLI's terminal UI through a pseudo-terminal, for a resumed session.

    python3 _cline_tty.py PROMPT CLINE [ARG...] --id SESSION

Cline CLI 3.0.65 resumes a session (``--id``) only in its interactive terminal UI. This starts
it on a pseudo-terminal, waits for the input box (``Ask anything``), types the prompt and Enter,
and waits until the session's messages file (``$CLINE_DATA_DIR/sessions/<id>/<id>.messages.json``)
ends with an answer to it: an assistant message with ``metrics`` and no tool call, after the
user message holding the prompt. Then it presses Ctrl-C twice and, if the UI is still up, ends
its process group. Exits 0 when the answer was written, 1 otherwise; prints the screen output
with the terminal's control sequences taken out.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import sys
import time
from pathlib import Path

READY_TIMEOUT = 30.0
ANSWER_TIMEOUT = 45.0


def answered(path: Path, prompt: str) -> bool:
    try:
        messages = json.loads(path.read_text()).get("messages") or []
    except (OSError, ValueError):
        return False
    asked = [i for i, m in enumerate(messages) if m.get("role") == "user" and prompt in json.dumps(m.get("content"))]
    if not asked or not messages:
        return False
    last = messages[-1]
    blocks = last.get("content") if isinstance(last.get("content"), list) else []
    return (len(messages) - 1 > asked[-1] and last.get("role") == "assistant" and "metrics" in last
            and not any(b.get("type") == "tool_use" for b in blocks))


def main() -> int:
    prompt, argv = sys.argv[1], sys.argv[2:]
    session = argv[argv.index("--id") + 1]
    data = Path(os.environ.get("CLINE_DATA_DIR") or Path(os.environ["HOME"]) / ".cline" / "data")
    messages = data / "sessions" / session / f"{session}.messages.json"
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="120", LINES="40")
    env.pop("NO_COLOR", None)
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(argv[0], argv, env)
    out = bytearray()

    def pump(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            out.extend(chunk)
            if b"\x1b[6n" in chunk:  # a cursor position query: answer it
                os.write(fd, b"\x1b[1;1R")

    deadline = time.monotonic() + READY_TIMEOUT
    while b"Ask anything" not in out and time.monotonic() < deadline:
        pump(0.5)
    pump(1.0)
    for ch in prompt:
        os.write(fd, ch.encode())
        time.sleep(0.01)
    pump(0.5)
    os.write(fd, b"\r")
    deadline = time.monotonic() + ANSWER_TIMEOUT
    ok = False
    while time.monotonic() < deadline:
        pump(0.5)
        if answered(messages, prompt):
            ok = True
            break
    pump(1.0)
    for _ in range(2):
        os.write(fd, b"\x03")
        pump(1.0)
    for _ in range(20):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.25)
    else:
        try:
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
    text = out.decode("utf-8", "replace")
    text = re.sub(r"\x1b\[[0-9;?<>=$]*[a-zA-Z]|\x1b[\]P_][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[=>()][0-9A-Za-z]?", "", text)
    print(text[-4000:])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
