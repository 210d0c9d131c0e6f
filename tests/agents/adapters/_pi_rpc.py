#!/usr/bin/env python3
"""Drives pi in RPC mode for the harness: ``_pi_rpc.py PI COMMANDS_JSON [pi arguments...]``.

Runs ``PI --mode rpc [pi arguments...]``, sends the commands one by one (JSON lines on stdin) and
waits for each one's ``response``; after a ``prompt`` also for ``agent_end``. A command
``{"type": "fork", "user_message": N}`` forks at the N-th user message (from 0) that
``get_fork_messages`` lists. Prints what pi printed, but the streaming updates; exits with pi's
status, or 1 when a command failed."""

import json
import subprocess
import sys


def main() -> int:
    exe, commands, args = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
    p = subprocess.Popen([exe, "--mode", "rpc", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    failed = False

    def until(pred):
        while True:
            line = p.stdout.readline()
            if not line:
                raise SystemExit(f"pi ended before answering (exit {p.wait()})")
            try:
                event = json.loads(line)
            except ValueError:
                print(line, end="")
                continue
            if event.get("type") != "message_update":
                print(json.dumps(event)[:2000], flush=True)
            if pred(event):
                return event

    def send(command):
        nonlocal failed
        p.stdin.write(json.dumps(command) + "\n")
        p.stdin.flush()
        response = until(lambda e: e.get("type") == "response" and e.get("command") == command["type"])
        failed = failed or not response.get("success")
        if command["type"] == "prompt":
            until(lambda e: e.get("type") == "agent_end")
        return response

    for command in commands:
        if command["type"] == "fork" and "user_message" in command:
            listed = send({"type": "get_fork_messages"})
            entry = listed["data"]["messages"][command["user_message"]]["entryId"]
            command = {"type": "fork", "entryId": entry}
        send(command)
    p.stdin.close()
    status = p.wait(timeout=60)
    return status or int(failed)


if __name__ == "__main__":
    sys.exit(main())
