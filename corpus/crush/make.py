#!/usr/bin/env python3
"""Writes corpus/crush/crush.db: a SYNTHETIC Crush database, for agentlog's tests.

The schema is the one Crush's migrations give (charmbracelet/crush at 37f36e93,
internal/db/migrations/*.sql, applied in order), with goose's version table beside it as
Crush's `goose.Up` leaves it. The rows are written as Crush writes them: `messages.parts` is
`marshalParts` of internal/message/message.go (a JSON array of {"type", "data"}, each data
the Go struct of internal/message/content.go, every field written in declaration order,
`<`, `>` and `&` escaped as Go's encoding/json does), times in whole seconds
(`strftime('%s', 'now')`, `time.Now().Unix()`), a `finish` part with reason `stop` and time 0
on every message not from a model (`Service.Create`). Ids, paths, text and figures are made up.

Run from anywhere: python3 corpus/crush/make.py
"""

import base64
import json
import os
import sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "crush.db")

# The schema the migrations give (Appendix C of tests/agents/FINDINGS-sqlite.md).
SCHEMA = """
CREATE TABLE goose_db_version (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    version_id INTEGER NOT NULL,
    is_applied INTEGER NOT NULL,
    tstamp TIMESTAMP DEFAULT (datetime('now'))
);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    parent_session_id TEXT,
    title TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0 CHECK (message_count >= 0),
    prompt_tokens  INTEGER NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
    completion_tokens  INTEGER NOT NULL DEFAULT 0 CHECK (completion_tokens>= 0),
    cost REAL NOT NULL DEFAULT 0.0 CHECK (cost >= 0.0),
    updated_at INTEGER NOT NULL,  -- Unix timestamp in milliseconds
    created_at INTEGER NOT NULL   -- Unix timestamp in milliseconds
, summary_message_id TEXT, todos TEXT);
CREATE TABLE files (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    path TEXT NOT NULL,
    content TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,  -- Unix timestamp in milliseconds
    updated_at INTEGER NOT NULL,  -- Unix timestamp in milliseconds
    FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE,
    UNIQUE(path, session_id, version)
);
CREATE INDEX idx_files_session_id ON files (session_id);
CREATE INDEX idx_files_path ON files (path);
CREATE TRIGGER update_files_updated_at
AFTER UPDATE ON files
BEGIN
UPDATE files SET updated_at = strftime('%s', 'now')
WHERE id = new.id;
END;
CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    parts TEXT NOT NULL default '[]',
    model TEXT,
    created_at INTEGER NOT NULL,  -- Unix timestamp in milliseconds
    updated_at INTEGER NOT NULL,  -- Unix timestamp in milliseconds
    finished_at INTEGER, provider TEXT, is_summary_message INTEGER DEFAULT 0 NOT NULL,  -- Unix timestamp in milliseconds
    FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE
);
CREATE INDEX idx_messages_session_id ON messages (session_id);
CREATE TRIGGER update_session_message_count_on_insert
AFTER INSERT ON messages
BEGIN
UPDATE sessions SET
    message_count = message_count + 1
WHERE id = new.session_id;
END;
CREATE TRIGGER update_session_message_count_on_delete
AFTER DELETE ON messages
BEGIN
UPDATE sessions SET
    message_count = message_count - 1
WHERE id = old.session_id;
END;
CREATE INDEX idx_sessions_created_at ON sessions (created_at);
CREATE INDEX idx_messages_created_at ON messages (created_at);
CREATE INDEX idx_files_created_at ON files (created_at);
CREATE TABLE read_files (
    session_id TEXT NOT NULL CHECK (session_id != ''),
    path TEXT NOT NULL CHECK (path != ''),
    read_at INTEGER NOT NULL,  -- Unix timestamp in seconds when file was last read
    FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE,
    PRIMARY KEY (path, session_id)
);
CREATE INDEX idx_read_files_session_id ON read_files (session_id);
CREATE INDEX idx_read_files_path ON read_files (path);
"""

# The triggers that stamp `updated_at` with the time of the write. Created after the rows are
# in, so that the sample does not depend on when it was made.
STAMPING_TRIGGERS = """
CREATE TRIGGER update_sessions_updated_at
AFTER UPDATE ON sessions
BEGIN
UPDATE sessions SET updated_at = strftime('%s', 'now')
WHERE id = new.id;
END;
CREATE TRIGGER update_messages_updated_at
AFTER UPDATE ON messages
BEGIN
UPDATE messages SET updated_at = strftime('%s', 'now')
WHERE id = new.id;
END;
"""

# The versions goose records, one per migration file (0 is goose's own first row).
MIGRATIONS = [0, 20250424200609, 20250515105448, 20250624000000, 20250627000000,
              20250810000000, 20250812000000, 20260127000000]


def go_json(value):
    """JSON as Go's encoding/json writes it: compact, HTML characters escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# The parts, field for field as content.go declares them.
def text(t):
    return {"type": "text", "data": {"text": t}}


def reasoning(thinking, signature, started, finished):
    return {"type": "reasoning", "data": {
        "thinking": thinking, "signature": signature, "thought_signature": "", "tool_id": "",
        "responses_data": None, "started_at": started, "finished_at": finished}}


def binary(path, mime, data):
    # BinaryContent has no JSON tags: Go names, []byte as base64.
    return {"type": "binary", "data": {
        "Path": path, "MIMEType": mime, "Data": base64.b64encode(data).decode()}}


def tool_call(call_id, name, arguments):
    return {"type": "tool_call", "data": {
        "id": call_id, "name": name, "input": go_json(arguments),
        "provider_executed": False, "finished": True}}


def tool_result(call_id, name, content, metadata="", is_error=False):
    return {"type": "tool_result", "data": {
        "tool_call_id": call_id, "name": name, "content": content, "data": "", "mime_type": "",
        "metadata": metadata, "is_error": is_error}}


def finish(reason, time, message="", details=""):
    data = {"reason": reason, "time": time}
    if message:
        data["message"] = message
    if details:
        data["details"] = details
    return {"type": "finish", "data": data}


def shell_command(command, output, exit_code):
    return {"type": "shell_command", "data": {"command": command, "output": output, "exit_code": exit_code}}


STOP = finish("stop", 0)


def bash_output(stdout, stderr, exit_code, cwd):
    """What `bash` returns for a command that ran to its end (formatOutput, then the cwd)."""
    error = stderr
    if exit_code != 0:
        error = (error + "\n" if error else "") + f"Exit code {exit_code}"
    out = stdout
    if stdout and stderr:
        out += "\n"
    if error:
        out += "\n" + error
    return out, out + f"\n\n<cwd>{cwd}</cwd>"


T0 = 1767261600  # 2026-01-01T10:00:00Z
MAIN = "6f0c1d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f"
PROJECT = "/home/dev/shop"

# A 1×1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

stdout, stderr = "--- FAIL: TestParse (0.00s)\nFAIL", "make: *** [Makefile:3: test] Error 1"
bash_text, bash_content = bash_output(stdout, stderr, 2, PROJECT)
bash_metadata = go_json({
    "start_time": (T0 + 4) * 1000 + 120, "end_time": (T0 + 5) * 1000 + 870, "output": bash_text,
    "description": "Run the tests", "working_directory": PROJECT})

AGENT_MESSAGE = "a0000000-0000-4000-8000-000000000006"
CHILD = f"{AGENT_MESSAGE}$$call_agent_1"
TITLE = f"title-{MAIN}"
CANCELED = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

# (id, parent, title, prompt_tokens, completion_tokens, cost, created, updated, todos)
SESSIONS = [
    (MAIN, None, "Fix the failing build", 5120, 210, 0.0183, T0, T0 + 40, go_json([
        {"content": "Run the tests", "status": "completed", "active_form": "Running the tests"},
        {"content": "Fix ParseConfig", "status": "in_progress", "active_form": "Fixing ParseConfig"},
    ])),
    (TITLE, MAIN, "Generate a title", 96, 6, 0.0001, T0 + 1, T0 + 2, None),
    (CHILD, MAIN, "New Agent Session", 2300, 40, 0.0042, T0 + 20, T0 + 26, None),
    (CANCELED, None, "Untitled Session", 0, 0, 0.0, T0 + 600, T0 + 603, None),
]

# (session, id, role, parts or raw text, model, provider, created, summary)
MESSAGES = [
    (MAIN, "a0000000-0000-4000-8000-000000000001", "user",
     [text("Why does `make test` fail? See the screenshot."), binary("/home/dev/shot.png", "image/png", PNG), STOP],
     "", None, T0, 0),
    (TITLE, "b0000000-0000-4000-8000-000000000001", "user",
     [text("Generate a concise title for the following content:\n\nWhy does `make test` fail? See the screenshot.\n <think>\n\n</think>"), STOP],
     "", None, T0 + 1, 0),
    (TITLE, "b0000000-0000-4000-8000-000000000002", "assistant",
     [text("Fix the failing build"), finish("end_turn", T0 + 2)],
     "fake-small", "fake", T0 + 1, 0),
    (MAIN, "a0000000-0000-4000-8000-000000000002", "assistant",
     [reasoning("The user wants to know why the tests fail; run them first.", "sig-Ek3xQ", T0 + 1, T0 + 3),
      text("Let me run the tests."),
      tool_call("call_bash_1", "bash", {"command": "make test", "description": "Run the tests"}),
      finish("tool_use", T0 + 4)],
     "fake-model", "fake", T0 + 1, 0),
    (MAIN, "a0000000-0000-4000-8000-000000000003", "tool",
     [tool_result("call_bash_1", "bash", bash_content, bash_metadata), STOP],
     "", None, T0 + 5, 0),
    (MAIN, "a0000000-0000-4000-8000-000000000004", "assistant",
     [tool_call("call_view_1", "view", {"file_path": f"{PROJECT}/config/missing.go"}), finish("tool_use", T0 + 7)],
     "fake-model", "fake", T0 + 6, 0),
    (MAIN, "a0000000-0000-4000-8000-000000000005", "tool",
     [tool_result("call_view_1", "view", f"File not found: {PROJECT}/config/missing.go", is_error=True), STOP],
     "", None, T0 + 7, 0),
    (MAIN, AGENT_MESSAGE, "assistant",
     [tool_call("call_agent_1", "agent", {"prompt": "Find where ParseConfig is defined"}), finish("tool_use", T0 + 19)],
     "fake-model", "fake", T0 + 18, 0),
    (CHILD, "c0000000-0000-4000-8000-000000000001", "user",
     [text("Find where ParseConfig is defined"), STOP], "", None, T0 + 20, 0),
    (CHILD, "c0000000-0000-4000-8000-000000000002", "assistant",
     [tool_call("call_grep_1", "grep", {"pattern": "func ParseConfig", "path": PROJECT}), finish("tool_use", T0 + 22)],
     "fake-model", "fake", T0 + 21, 0),
    (CHILD, "c0000000-0000-4000-8000-000000000003", "tool",
     [tool_result("call_grep_1", "grep", f"Found 1 matches\n{PROJECT}/config/parse.go:\n  Line 12: func ParseConfig(path string) (*Config, error) {{\n",
                  go_json({"number_of_matches": 1, "truncated": False})), STOP],
     "", None, T0 + 23, 0),
    (CHILD, "c0000000-0000-4000-8000-000000000004", "assistant",
     [text("ParseConfig is defined in config/parse.go, line 12."), finish("end_turn", T0 + 26)],
     "fake-model", "fake", T0 + 24, 0),
    (MAIN, "a0000000-0000-4000-8000-000000000007", "tool",
     [tool_result("call_agent_1", "agent", "ParseConfig is defined in config/parse.go, line 12."), STOP],
     "", None, T0 + 26, 0),
    (MAIN, "a0000000-0000-4000-8000-000000000008", "assistant",
     [text("The test fails because ParseConfig rejects an empty path & returns an error; config/parse.go line 12."),
      {"type": "citation", "data": {"url": "https://example.com/go-testing", "title": "Go testing"}},
      finish("end_turn", T0 + 30)],
     "fake-model", "fake", T0 + 27, 0),
    # A row whose parts were cut short: not JSON.
    (MAIN, "a0000000-0000-4000-8000-000000000009", "user",
     '[{"type":"text","data":{"text":"thanks, now fix i', "", None, T0 + 35, 0),
    (MAIN, "a0000000-0000-4000-8000-00000000000a", "user",
     [shell_command("git status --short", " M config/parse.go\n", 0), STOP], "", None, T0 + 38, 0),
    (CANCELED, "d0000000-0000-4000-8000-000000000001", "user",
     [text("Summarize the repository"), STOP], "", None, T0 + 600, 0),
    (CANCELED, "d0000000-0000-4000-8000-000000000002", "assistant",
     [text("The repository"), finish("canceled", T0 + 603, "User canceled request")],
     "fake-model", "fake", T0 + 601, 0),
]


def main():
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(OUT + suffix):
            os.remove(OUT + suffix)
    db = sqlite3.connect(OUT)
    db.executescript(SCHEMA)
    db.executemany("INSERT INTO goose_db_version (version_id, is_applied, tstamp) VALUES (?, 1, '2026-01-01 09:59:00')",
                   [(v,) for v in MIGRATIONS])
    for (sid, parent, title, prompt, completion, cost, created, updated, todos) in SESSIONS:
        db.execute(
            "INSERT INTO sessions (id, parent_session_id, title, message_count, prompt_tokens, completion_tokens,"
            " cost, updated_at, created_at, summary_message_id, todos) VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, NULL, ?)",
            (sid, parent, title, prompt, completion, cost, updated, created, todos))
    for (sid, mid, role, parts, model, provider, created, summary) in MESSAGES:
        raw = parts if isinstance(parts, str) else go_json(parts)
        # `finished_at` is written by updates (`Service.Update`), which only responses get.
        finished = None
        if role == "assistant":
            finished = next((p["data"]["time"] for p in parts if p["type"] == "finish"), None)
        # The row as its last update left it: `updated_at` is the time of the last write.
        updated = max(created, finished or 0)
        db.execute(
            "INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at, finished_at,"
            " provider, is_summary_message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (mid, sid, role, raw, model, created, updated, finished, provider, summary))
    db.execute("INSERT INTO files (id, session_id, path, content, version, created_at, updated_at)"
               " VALUES ('f0000000-0000-4000-8000-000000000001', ?, ?, ?, 0, ?, ?)",
               (MAIN, f"{PROJECT}/config/parse.go", "package config\n", T0 + 8, T0 + 8))
    db.execute("INSERT INTO read_files (session_id, path, read_at) VALUES (?, ?, ?)",
               (CHILD, f"{PROJECT}/config/parse.go", T0 + 23))
    db.executescript(STAMPING_TRIGGERS)
    db.commit()
    # Crush runs in WAL mode; the sample is kept in rollback mode so that reading it in place
    # leaves no `-wal` or `-shm` beside it.
    db.execute("VACUUM")
    db.close()


if __name__ == "__main__":
    main()
