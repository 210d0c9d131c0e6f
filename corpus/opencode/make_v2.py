#!/usr/bin/env python3
"""Build a SYNTHETIC OpenCode 2.0 (session_v2/session_message) SQLite DB.

DDL: verbatim from upstream migrations (anomalyco/opencode @7656aeb6
packages/core/src/database/migration/20260804233008_loose_psylocke.ts, plus
20260811161259_execution_claim_attempts and 20260819222447_session_viewed_state)
in the column order of a freshly bootstrapped 2.0.25 DB (third-party sqlite_master dump).
Row JSON follows packages/schema/src/session-message.ts (zjdCander/opencode @1066927b,
a 2.0-era tree) encoded form: id/type live in columns, the rest in `data`;
DateTimeUtcFromMillis encodes to epoch-ms numbers.
"""
import json, os, sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "opencode-2.0-synthetic.db")
for suffix in ("", "-wal", "-shm"):
    if os.path.exists(OUT + suffix):
        os.remove(OUT + suffix)

DDL = """
CREATE TABLE `project` (
          `id` text PRIMARY KEY,
          `worktree` text NOT NULL,
          `vcs` text,
          `name` text,
          `icon_url` text,
          `icon_url_override` text,
          `icon_color` text,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `time_initialized` integer,
          `time_active` integer DEFAULT 0 NOT NULL,
          `sandboxes` text NOT NULL,
          `commands` text
        );
CREATE TABLE `kv` (
          `key` text PRIMARY KEY,
          `value` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL
        );
CREATE TABLE `session_v2` (
          `id` text PRIMARY KEY,
          `project_id` text NOT NULL,
          `workspace_id` text,
          `parent_id` text,
          `fork_session_id` text,
          `fork_boundary` text,
          `slug` text NOT NULL,
          `directory` text NOT NULL,
          `path` text,
          `title` text,
          `version` text NOT NULL,
          `share_url` text,
          `summary_additions` integer,
          `summary_deletions` integer,
          `summary_files` integer,
          `summary_diffs` text,
          `metadata` text,
          `cost` real DEFAULT 0 NOT NULL,
          `tokens_input` integer DEFAULT 0 NOT NULL,
          `tokens_output` integer DEFAULT 0 NOT NULL,
          `tokens_reasoning` integer DEFAULT 0 NOT NULL,
          `tokens_cache_read` integer DEFAULT 0 NOT NULL,
          `tokens_cache_write` integer DEFAULT 0 NOT NULL,
          `revert` text,
          `permission` text,
          `agent` text,
          `model` text,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `time_idle` integer,
          `time_viewed` integer,
          `idle_outcome` text,
          `time_compacting` integer,
          `time_archived` integer,
          `time_suspended` integer,
          `resume_attempts` integer DEFAULT 0 NOT NULL,
          CONSTRAINT `fk_session_v2_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
        );
CREATE INDEX `session_v2_project_idx` ON `session_v2` (`project_id`);
CREATE INDEX `session_v2_workspace_idx` ON `session_v2` (`workspace_id`);
CREATE INDEX `session_v2_parent_idx` ON `session_v2` (`parent_id`);
CREATE INDEX `session_v2_time_suspended_idx` ON `session_v2` (`time_suspended`) WHERE "session_v2"."time_suspended" is not null;
CREATE TABLE `session_message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `type` text NOT NULL,
          `seq` integer NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_session_message_session_id_session_v2_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session_v2`(`id`) ON DELETE CASCADE
        );
CREATE UNIQUE INDEX `session_message_session_seq_idx` ON `session_message` (`session_id`,`seq`);
CREATE INDEX `session_message_session_type_seq_idx` ON `session_message` (`session_id`,`type`,`seq`);
CREATE INDEX `session_message_session_time_created_id_idx` ON `session_message` (`session_id`,`time_created`,`id`);
CREATE INDEX `session_message_time_created_idx` ON `session_message` (`time_created`);
"""

T = 1790000000000  # 2026-09-21T14:13:20Z, epoch ms (synthetic)
PROJECT = "5f3a9c0e7b2d4e6f8a1b3c5d7e9f0a2b4c6d8e0f"
SES = "ses_e3b7c2d4affeQk8Vn2Lr5Tz9Wx"
MODEL = {"id": "claude-sonnet-4-5", "providerID": "anthropic"}
CALL_ID = "toolu_01SynthShellCall0000001"
PROMPT = "Run `ls does-not-exist` and tell me what happened."
TOOL_OUT = "ls: cannot access 'does-not-exist': No such file or directory\n"
STEP1_TEXT = "I'll run that command now."
STEP1_REASONING = "The user wants ls run on a path that probably does not exist; run it and report the exit status."
ANSWER = "The command failed: `ls` reported that `does-not-exist` does not exist and exited with code 2."
STEP2_REASONING = "ls exited with status 2, which GNU ls uses for serious trouble such as an inaccessible command-line argument."

step1_tokens = {"input": 1834, "output": 57, "reasoning": 41, "cache": {"read": 12288, "write": 2048}}
step2_tokens = {"input": 96, "output": 143, "reasoning": 37, "cache": {"read": 14336, "write": 112}}
step1_cost, step2_cost = 0.01234, 0.00871

rows = [
    # (id, type, seq, time_created, time_updated, data)
    ("msg_11e0a1b2c001Ab3dEf6GhIjK7L", "user", 4, T + 1000, T + 1001, {
        "time": {"created": T + 1000},
        "text": PROMPT,
        "files": [],
    }),
    ("msg_11e0a1b2d001Mn4oPq7RsTuV8W", "assistant", 5, T + 1200, T + 3900, {
        "time": {"created": T + 1200, "streamed": T + 3400, "completed": T + 3900},
        "agent": "build",
        "model": MODEL,
        "content": [
            {"type": "reasoning", "text": STEP1_REASONING,
             "time": {"created": T + 1500, "completed": T + 2100}},
            {"type": "text", "text": STEP1_TEXT},
            {"type": "tool", "id": CALL_ID, "name": "shell", "executed": False,
             "state": {
                 "status": "completed",
                 "input": {"command": "ls does-not-exist"},
                 "content": [
                     {"type": "text", "text": TOOL_OUT},
                     {"type": "text", "text": "Exited with code 2"},
                 ],
                 "metadata": {"status": "completed", "truncated": False, "exit": 2},
             },
             "time": {"created": T + 2300, "ran": T + 3450, "completed": T + 3850}},
        ],
        "finish": "tool-calls",
        "rawFinish": "tool_use",
        "cost": step1_cost,
        "tokens": step1_tokens,
    }),
    ("msg_11e0a1b2e001Xy9zAb2CdEf3Gh", "assistant", 14, T + 4000, T + 6150, {
        "time": {"created": T + 4000, "streamed": T + 6100, "completed": T + 6150},
        "agent": "build",
        "model": MODEL,
        "content": [
            {"type": "reasoning", "text": STEP2_REASONING,
             "time": {"created": T + 4300, "completed": T + 4800}},
            {"type": "text", "text": ANSWER},
        ],
        "finish": "stop",
        "rawFinish": "end_turn",
        "cost": step2_cost,
        "tokens": step2_tokens,
    }),
    ("msg_11e0a1b2f001Ij4kLm5NoPq6Rs", "idle", 19, T + 6200, T + 6200, {
        "time": {"created": T + 6200},
        "outcome": "succeeded",
    }),
]

def tot(key):
    if key in ("read", "write"):
        return step1_tokens["cache"][key] + step2_tokens["cache"][key]
    return step1_tokens[key] + step2_tokens[key]

db = sqlite3.connect(OUT)
db.execute("PRAGMA foreign_keys = ON")
db.executescript(DDL)
db.execute(
    "INSERT INTO project (id, worktree, vcs, name, icon_url, icon_url_override, icon_color, time_created, time_updated,"
    " time_initialized, time_active, sandboxes, commands) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    (PROJECT, "/home/dev/demo", "git", None, None, None, None, T - 60000, T, None, T, "[]", None),
)
db.execute(
    "INSERT INTO session_v2 (id, project_id, workspace_id, parent_id, fork_session_id, fork_boundary, slug, directory,"
    " path, title, version, share_url, summary_additions, summary_deletions, summary_files, summary_diffs, metadata,"
    " cost, tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write, revert, permission,"
    " agent, model, time_created, time_updated, time_idle, time_viewed, idle_outcome, time_compacting, time_archived,"
    " time_suspended, resume_attempts) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    (SES, PROJECT, None, None, None, None, "brave-otter", "/home/dev/demo", "", "Run ls on a missing directory",
     "2.0.26", None, None, None, None, None, None,
     round(step1_cost + step2_cost, 5), tot("input"), tot("output"), tot("reasoning"), tot("read"), tot("write"),
     None, None, None, None, T, T + 6150, T + 6200, None, "succeeded", None, None, None, 0),
)
for mid, typ, seq, tc, tu, data in rows:
    db.execute(
        "INSERT INTO session_message (id, session_id, type, seq, time_created, time_updated, data) VALUES (?,?,?,?,?,?,?)",
        (mid, SES, typ, seq, tc, tu, json.dumps(data, separators=(",", ":"))),
    )
db.commit()
db.execute("PRAGMA foreign_key_check")
db.close()

expected = {
    "synthetic": True,
    "note": "Hand-made from OpenCode 2.0 source types; not produced by opencode2. See 'guessed'.",
    "database": os.path.basename(OUT),
    "session": {
        "table": "session_v2", "id": SES, "project_id": PROJECT, "parent_id": None,
        "directory": "/home/dev/demo", "title": "Run ls on a missing directory", "version": "2.0.26",
        "slug": "brave-otter", "time_created_ms": T, "time_updated_ms": T + 6150,
        "time_idle_ms": T + 6200, "idle_outcome": "succeeded",
        "agent_column": None, "model_column": None,
        "totals_columns": {"cost": round(step1_cost + step2_cost, 5), "tokens_input": tot("input"),
                           "tokens_output": tot("output"), "tokens_reasoning": tot("reasoning"),
                           "tokens_cache_read": tot("read"), "tokens_cache_write": tot("write")},
        "totals_note": "Here totals == sum of the two assistant rows. In real 2.0.26 captures session_v2 totals "
                       "also include hidden title-agent usage, so they can exceed the per-message sum.",
    },
    "rows_in_seq_order": [
        {"seq": 4, "id": rows[0][0], "type": "user", "meaning": "user prompt",
         "prompt_text": PROMPT, "time_ms": T + 1000},
        {"seq": 5, "id": rows[1][0], "type": "assistant",
         "meaning": "assistant step 1: reasoning, short text, then a shell (bash) tool call that exited 2",
         "model": MODEL, "agent": "build", "reasoning": STEP1_REASONING, "text": STEP1_TEXT,
         "tool_calls": [{"call_id": CALL_ID, "name": "shell", "v1_equivalent_name": "bash",
                         "input": {"command": "ls does-not-exist"}, "status": "completed",
                         "output_text": TOOL_OUT, "output_content_texts": [TOOL_OUT, "Exited with code 2"],
                         "exit_code": 2, "exit_code_path": "content[2].state.metadata.exit",
                         "is_error": False,
                         "is_error_note": "status stays 'completed' for a non-zero exit; failure is only metadata.exit != 0",
                         "time_ms": {"created": T + 2300, "ran": T + 3450, "completed": T + 3850}}],
         "finish": "tool-calls", "rawFinish": "tool_use",
         "usage": {"input": 1834, "output": 57, "reasoning": 41, "cache_read": 12288, "cache_write": 2048,
                   "cost_usd": step1_cost},
         "time_ms": {"created": T + 1200, "streamed": T + 3400, "completed": T + 3900}},
        {"seq": 14, "id": rows[2][0], "type": "assistant", "meaning": "assistant step 2: reasoning + final answer",
         "model": MODEL, "agent": "build", "reasoning": STEP2_REASONING, "text": ANSWER, "tool_calls": [],
         "finish": "stop", "rawFinish": "end_turn",
         "usage": {"input": 96, "output": 143, "reasoning": 37, "cache_read": 14336, "cache_write": 112,
                   "cost_usd": step2_cost},
         "time_ms": {"created": T + 4000, "streamed": T + 6100, "completed": T + 6150}},
        {"seq": 19, "id": rows[3][0], "type": "idle", "meaning": "turn boundary; outcome of the turn",
         "outcome": "succeeded", "time_ms": T + 6200},
    ],
    "turns": [{"prompt_row": rows[0][0], "assistant_rows": [rows[1][0], rows[2][0]], "idle_row": rows[3][0],
               "final_answer": ANSWER}],
    "usage_semantics": "tokens.input = non-cached input; output = visible output (excl. reasoning); reasoning "
                       "separate; cache.read/write separate (SessionUsage.tokens in packages/core/src/session/usage.ts)",
    "guessed": [
        "All ids (ses_/msg_/toolu_), project id, slug, timestamps, texts, token and cost numbers are invented.",
        "seq values 4,5,14,19 imitate the gaps seen in a real 2.0.26 capture (seq is the event-aggregate sequence, not a row counter).",
        "shell tool content: output text plus the notice 'Exited with code 2' follows ShellResult.notice in the zjdCander @1066927b tree; "
        "another upstream revision wrote 'Command exited with code N.' for every exit; treat content text as display only.",
        "metadata has no shellID: foreground ShellResult.output() carries none (matches the 2.0.26 capture's {status,truncated,exit}).",
        "rawFinish 'tool_use'/'end_turn' assumed for an Anthropic model; finish values are the normalized enum.",
        "Reasoning carries no provider blob; its key is 'state' in some 2.0 revisions and 'native' in later ones (text/tool: state|native, providerState|native).",
        "session_v2.agent and .model left NULL as in the real 2.0.26 capture of root sessions; readers should take the model from assistant rows.",
        "user.files = [] copied from the 2.0.26 capture; the field is optional.",
        "project.time_active column position follows the 2.0.25 fresh-bootstrap dump; migrated DBs append columns at the end (time_idle etc. after resume_attempts).",
        "The kv table is present but empty (a fresh 2.0 DB with no V1 tables never writes migration.v1-v2).",
    ],
}
with open(os.path.join(HERE, "opencode-2.0-synthetic.expected.json"), "w") as f:
    json.dump(expected, f, indent=2)
print("ok")
