#!/usr/bin/env python3
"""Writes corpus/kiro/data.sqlite3: a SYNTHETIC Kiro CLI store, for agentlog's tests.

The tables are those third-party readers of Kiro CLI's `data.sqlite3` describe
(marcus/sidecar#100, kapmcli/kapm#13, samzong/Recall PR #2): the older `conversations(key,
value)`, one conversation per working directory, and `conversations_v2(key, conversation_id,
value, created_at, updated_at)`, times in milliseconds. Each `value` is a conversation document
in the serde form of Amazon Q Developer CLI's `ConversationState`
(aws/amazon-q-developer-cli, crates/chat-cli/src/cli/chat/message.rs at 01e5e3dc), the same
shape as corpus/kiro/conversation-document.jsonl. Ids, paths, text and times are made up.

What the rows show: two conversations of one directory in `conversations_v2` (a prompt and a
tool call with its result; a prompt and an answer); in `conversations` one conversation of
another directory, one that `conversations_v2` holds too (listed once), and a row whose value is
not JSON (one diagnostic).

Run from anywhere: python3 corpus/kiro/make_store.py
"""

import json
import os
import sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data.sqlite3")


def prompt(text, ts):
    return {"additional_context": "", "env_context": {"env_state": {"operating_system": "linux"}},
            "content": {"Prompt": {"prompt": text}}, "timestamp": ts, "images": None}


def results(call_id, text, status):
    return {"additional_context": "", "env_context": {"env_state": None},
            "content": {"ToolUseResults": {"tool_use_results": [
                {"tool_use_id": call_id, "content": [{"Text": text}], "status": status}]}},
            "timestamp": None, "images": None}


def conversation(cid, history):
    return {"conversation_id": cid, "next_message": None, "history": history,
            "valid_history_range": [0, len(history)], "transcript": [], "tools": {},
            "context_manager": None, "latest_summary": None,
            "model_info": {"model_name": "claude-sonnet-4", "model_id": "claude-sonnet-4"}}


A = conversation("aaaaaaaa-0000-4000-8000-000000000001", [
    {"user": prompt("run echo hi", "2026-09-02T09:00:00+00:00"),
     "assistant": {"ToolUse": {"message_id": "ma-1", "content": "Running it.", "tool_uses": [
         {"id": "tooluse_e1", "name": "execute_bash", "orig_name": "execute_bash",
          "args": {"command": "echo hi"}, "orig_args": {"command": "echo hi"}}]}}},
    {"user": results("tooluse_e1", "hi", "Success"),
     "assistant": {"Response": {"message_id": "ma-2", "content": "It printed hi."}}},
])
B = conversation("bbbbbbbb-0000-4000-8000-000000000002", [
    {"user": prompt("say hello", "2026-09-02T10:00:00+00:00"),
     "assistant": {"Response": {"message_id": "mb-1", "content": "Hello."}}},
])
C = conversation("cccccccc-0000-4000-8000-000000000003", [
    {"user": prompt("what is in this folder", "2026-08-01T08:00:00+00:00"),
     "assistant": {"Response": {"message_id": "mc-1", "content": "Two files."}}},
])

if os.path.exists(OUT):
    os.remove(OUT)
db = sqlite3.connect(OUT)
db.executescript("""
CREATE TABLE conversations (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE conversations_v2 (key TEXT NOT NULL, conversation_id TEXT NOT NULL, value TEXT NOT NULL,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (key, conversation_id));
""")
dump = lambda d: json.dumps(d, separators=(",", ":"))
db.executemany("INSERT INTO conversations_v2 VALUES (?, ?, ?, ?, ?)", [
    ("/home/dev/proj", A["conversation_id"], dump(A), 1788339600000, 1788339660000),
    ("/home/dev/proj", B["conversation_id"], dump(B), 1788343200000, 1788343210000),
])
db.executemany("INSERT INTO conversations VALUES (?, ?)", [
    ("/home/dev/other", dump(C)),
    ("/home/dev/proj", dump(A)),
    ("/home/dev/broken", "{\"conversation_id\": \"dddddddd-0000-4000-8000-000000000004\", \"history\": ["),
])
db.commit()
db.close()
