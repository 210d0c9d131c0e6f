#!/usr/bin/env python3
"""Build a SYNTHETIC OpenCode 1.x database (`opencode-quirks.db`) of quirks the recorded
databases do not show.

The tables are OpenCode 1.18.33's own (`project`, `session`, `message`, `part`, `todo` and their indexes, the
DDL copied from a database that version wrote, `tests/agents/FINDINGS-sqlite.md` appendix A);
the rows are made up, in the shapes that version writes. Run it to rebuild the file.
"""
import json
import os
import sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "opencode-quirks.db")

DDL = """
CREATE TABLE `project` (
  `id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text, `name` text, `icon_url` text,
  `icon_color` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
  `time_initialized` integer, `sandboxes` text NOT NULL, `commands` text, `icon_url_override` text);
CREATE TABLE `message` (
  `id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `data` text NOT NULL);
CREATE TABLE `part` (
  `id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);
CREATE TABLE `session` (
  `id` text PRIMARY KEY, `project_id` text NOT NULL, `workspace_id` text, `parent_id` text,
  `slug` text NOT NULL, `directory` text NOT NULL, `path` text, `title` text NOT NULL,
  `version` text NOT NULL, `share_url` text, `summary_additions` integer, `summary_deletions` integer,
  `summary_files` integer, `summary_diffs` text, `metadata` text, `cost` real DEFAULT 0 NOT NULL,
  `tokens_input` integer DEFAULT 0 NOT NULL, `tokens_output` integer DEFAULT 0 NOT NULL,
  `tokens_reasoning` integer DEFAULT 0 NOT NULL, `tokens_cache_read` integer DEFAULT 0 NOT NULL,
  `tokens_cache_write` integer DEFAULT 0 NOT NULL, `revert` text, `permission` text, `agent` text,
  `model` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
  `time_compacting` integer, `time_archived` integer);
CREATE TABLE `todo` (
  `session_id` text NOT NULL, `content` text NOT NULL, `status` text NOT NULL, `priority` text NOT NULL,
  `position` integer NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
  CONSTRAINT `todo_pk` PRIMARY KEY(`session_id`, `position`));
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
CREATE INDEX `session_project_idx` ON `session` (`project_id`);
CREATE INDEX `session_workspace_idx` ON `session` (`workspace_id`);
CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);
CREATE INDEX `todo_session_idx` ON `todo` (`session_id`);
"""

T = 1795000000000
ROOT, CHILD = "ses_synthroot0001", "ses_synthchild001"
CWD = "/home/dev/quirks"


def session(c, id, parent, title, at):
    c.execute(
        "INSERT INTO session (id, project_id, parent_id, slug, directory, path, title, version, cost,"
        " tokens_input, tokens_output, permission, agent, model, time_created, time_updated)"
        " VALUES (?, 'global', ?, 'quiet-quirk', ?, 'home/dev/quirks', ?, '1.18.33', 0.0042, 0, 0, '[]', 'build',"
        " ?, ?, ?)",
        (id, parent, CWD, title, json.dumps({"id": "fake-model", "providerID": "fake"}), at, at + 60000),
    )


def message(c, id, session, at, data):
    text = data if isinstance(data, str) else json.dumps(data)
    c.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (id, session, at, at, text))


def part(c, id, msg, session, at, data):
    c.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (id, msg, session, at, at, json.dumps(data)))


def tokens(i, o, r, cr, cw):
    return {"total": i + o + r + cr + cw, "input": i, "output": o, "reasoning": r, "cache": {"read": cr, "write": cw}}


def assistant(parent, at, tok, cost, finish="stop"):
    return {"parentID": parent, "role": "assistant", "mode": "build", "agent": "build",
            "path": {"cwd": CWD, "root": "/"}, "cost": cost, "tokens": tok, "modelID": "fake-model",
            "providerID": "fake", "time": {"created": at, "completed": at + 900}, "finish": finish}


def build():
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(OUT + suffix):
            os.remove(OUT + suffix)
    c = sqlite3.connect(OUT)
    c.executescript(DDL)
    session(c, ROOT, None, "Quirks of a session", T)
    session(c, CHILD, ROOT, "Check the tree (@general subagent)", T + 5000)

    # A prompt with an attached image and a synthetic note the agent added.
    message(c, "msg_q001", ROOT, T + 100, {"role": "user", "time": {"created": T + 100}, "agent": "build",
                                          "model": {"providerID": "fake", "modelID": "fake-model"}})
    part(c, "prt_q001a", "msg_q001", ROOT, T + 100, {"type": "text", "text": "Look at this screenshot and list the tree."})
    part(c, "prt_q001b", "msg_q001", ROOT, T + 100,
         {"type": "file", "mime": "image/png", "filename": "shot.png", "url": "data:image/png;base64,iVBORw0KGgo="})
    part(c, "prt_q001c", "msg_q001", ROOT, T + 100,
         {"type": "text", "text": "Called the Read tool with the following input: {\"filePath\":\"shot.png\"}", "synthetic": True})

    # Response 1: reasoning with a signature, a failed command, a tool error, a subagent, a call
    # still running when the session was read, and a part of a type agentlog does not know.
    a1 = assistant("msg_q001", T + 1000, tokens(1200, 80, 20, 300, 40), 0.0021, "tool-calls")
    message(c, "msg_q002", ROOT, T + 1000, a1)
    part(c, "prt_q002a", "msg_q002", ROOT, T + 1000, {"type": "step-start", "snapshot": "4b825dc642cb6eb9a060e54bf8d69288fbee4904"})
    part(c, "prt_q002b", "msg_q002", ROOT, T + 1001, {"type": "reasoning", "text": "List it, then ask a subagent.",
                                                     "metadata": {"anthropic": {"signature": "sig-quirks"}},
                                                     "time": {"start": T + 1001, "end": T + 1002}})
    part(c, "prt_q002c", "msg_q002", ROOT, T + 1003, {"type": "tool", "tool": "bash", "callID": "call_q1", "state": {
        "status": "completed", "input": {"command": "ls /missing", "description": "List"},
        "output": "ls: cannot access '/missing': No such file or directory\n",
        "metadata": {"output": "ls: cannot access '/missing': No such file or directory\n", "exit": 2},
        "title": "ls /missing", "time": {"start": T + 1003, "end": T + 1043}}})
    part(c, "prt_q002d", "msg_q002", ROOT, T + 1050, {"type": "tool", "tool": "read", "callID": "call_q2", "state": {
        "status": "error", "input": {"filePath": "/missing/a.txt"}, "error": "File not found: /missing/a.txt",
        "time": {"start": T + 1050, "end": T + 1051}}})
    part(c, "prt_q002e", "msg_q002", ROOT, T + 1060, {"type": "tool", "tool": "task", "callID": "call_q3", "state": {
        "status": "completed", "input": {"description": "Check the tree", "prompt": "Run tree.", "subagent_type": "general"},
        "output": "<task id=\"ses_synthchild001\" state=\"completed\">\n<task_result>\nNo tree.\n</task_result>\n</task>",
        "metadata": {"parentSessionId": ROOT, "sessionId": CHILD}, "title": "Check the tree",
        "time": {"start": T + 1060, "end": T + 9000}}})
    part(c, "prt_q002f", "msg_q002", ROOT, T + 9001, {"type": "tool", "tool": "bash", "callID": "call_q4", "state": {
        "status": "running", "input": {"command": "sleep 100"}, "time": {"start": T + 9001}}})
    part(c, "prt_q002g", "msg_q002", ROOT, T + 9002, {"type": "frobnicate", "level": 3})
    part(c, "prt_q002h", "msg_q002", ROOT, T + 9003,
         {"type": "step-finish", "reason": "tool-calls", "tokens": tokens(1200, 80, 20, 300, 40), "cost": 0.0021})

    # Response 2: usage on the message only, as older versions wrote it (no step-finish).
    message(c, "msg_q003", ROOT, T + 10000, assistant("msg_q001", T + 10000, tokens(1400, 60, 0, 500, 0), 0.0019))
    part(c, "prt_q003a", "msg_q003", ROOT, T + 10001, {"type": "text", "text": "There is no tree; the path is missing."})

    # A message row whose data is not JSON (its part still reads), and a part whose message is gone.
    message(c, "msg_q004", ROOT, T + 20000, '{"role": "assistant", "tokens": ')
    part(c, "prt_q004a", "msg_q004", ROOT, T + 20001, {"type": "text", "text": "Written under a damaged message."})
    part(c, "prt_q005a", "msg_gone", ROOT, T + 30000, {"type": "text", "text": "Left by a removed message."})

    # The plan as it stands.
    for i, (content, status) in enumerate([("List the tree", "completed"), ("Report", "in_progress")]):
        c.execute("INSERT INTO todo VALUES (?, ?, ?, 'high', ?, ?, ?)", (ROOT, content, status, i, T + 40000, T + 40000 + i))

    # The subagent's session.
    message(c, "msg_q101", CHILD, T + 5100, {"role": "user", "time": {"created": T + 5100}, "agent": "general",
                                            "model": {"providerID": "fake", "modelID": "fake-model"}})
    part(c, "prt_q101a", "msg_q101", CHILD, T + 5100, {"type": "text", "text": "Run tree."})
    message(c, "msg_q102", CHILD, T + 5200, assistant("msg_q101", T + 5200, tokens(900, 30, 0, 0, 0), 0.0009))
    part(c, "prt_q102a", "msg_q102", CHILD, T + 5201, {"type": "step-start"})
    part(c, "prt_q102b", "msg_q102", CHILD, T + 5202, {"type": "text", "text": "No tree."})
    part(c, "prt_q102c", "msg_q102", CHILD, T + 5203,
         {"type": "step-finish", "reason": "stop", "tokens": tokens(900, 30, 0, 0, 0), "cost": 0.0009})
    c.commit()
    c.close()


if __name__ == "__main__":
    build()
    print("wrote", OUT)
