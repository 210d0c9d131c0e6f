#!/usr/bin/env python3
"""A scripted model server for running real coding agents offline.

It listens on 127.0.0.1 only, answers each model request with the next
response of a scripted scenario, and writes a ledger (JSON) of every request
received and every response served, so that a test can compare what an agent
logged with what the model "said".

APIs spoken, one handler function each (see ``ROUTES`` at the bottom):

* Anthropic Messages (``POST /v1/messages``, streaming SSE or plain JSON) and
  its side endpoints (``/v1/messages/count_tokens``, ``GET /v1/models``);
* OpenAI Responses (``POST /v1/responses``, streaming SSE or plain JSON) and
  ``GET /v1/models``;
* OpenAI Chat Completions (``POST /v1/chat/completions``, streaming
  ``data:`` chunks ending with ``data: [DONE]``, or plain JSON);
* Gemini ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse``
  (``data:`` chunks), ``:generateContent`` (plain JSON) and ``:countTokens``.

To add another API: write one handler ``def handle_xxx(srv, req) -> None`` that

1. reads the request (``req.json``), works out its *channel* (``main``,
   ``subagent``, ``compact`` or a side request, see ``Script.next_step``;
   ``_compact_or_subagent`` tells the first two) and the texts of the user
   messages, and starts its ledger entry with ``_ledger_entry``,
2. takes the step with ``_take_step`` (the channel's next step, or the API's
   side answer), serves a step's ``error`` with ``_serve_error``, and takes
   the usage numbers with ``_next_usage``,
3. turns the step's abstract tool calls into the tools the request offers
   (the way ``_anthropic_tool_use`` and ``_responses_tool_call`` do),
4. writes the response (``req.send_sse`` / ``req.send_json``) and adds the
   entry, with its ``response``, to the ledger (``srv.ledger.add``),

and add it to ``ROUTES``. Nothing else needs to change.

Scenario format (JSON), all keys optional except ``main``::

    {"name": "tools",
     "main":     [STEP, ...],      # the session's own model requests, in order
     "subagent": [STEP, ...],      # requests whose first user message holds
                                   #   the subagent marker (see below)
     "compact":  [STEP, ...],      # summarisation requests of a compaction
     "subagent_marker": "SUBTASK-...",
     "chat_reasoning_field": "reasoning_content",  # or "reasoning_text" (Chat Completions)
     "main_without_tools": true}  # Chat Completions requests without tools are the session's own

    STEP = {"text": "...", "thinking": "...",
            "tool_calls": [{"tool": "shell", "command": "echo hello"},
                           {"tool": "subagent", "description": "...", "prompt": "..."},
                           {"tool": "wait_subagent"},      # Codex wait_agent, Copilot read_agent
                           {"tool": "finish_subagent", "result": "..."},  # Gemini complete_task
                           {"name": "AnyTool", "input": {...}}],
            "error": {"status": 529, "type": "overloaded_error", "message": "..."}}

A step with ``error`` is served as an HTTP error (the agent's retry then gets
the next step).  When a channel runs out of steps the server answers with a
short text marked ``unscripted`` in the ledger (a test should treat that as a
failure of the scenario, not of the agent).

Token usage: the k-th response served (k = 0, 1, 2, ... over the whole run,
side requests included) carries input ``1000 + 37k``, output ``50 + 11k``,
cache reads ``300 + 23k``, cache writes ``200 + 13k`` and, for reasoning
steps on the OpenAI and Gemini APIs, reasoning ``10 + 3k``, so every
response's usage is distinct and known.  Each API gets them in its own
terms: where input includes cached input (OpenAI ``input_tokens`` /
``prompt_tokens``, Gemini ``promptTokenCount``) it is served as fresh +
cache reads; OpenAI reasoning is part of output (``reasoning_tokens``),
Gemini's ``thoughtsTokenCount`` is beside ``candidatesTokenCount``; only
Anthropic has cache writes.

Standalone use::

    python3 server.py --scenario scenario.json --ledger ledger.json \
        [--port 0] [--idle-timeout 120] [--max-lifetime 900]

prints ``PORT <n>`` on its first line and exits after ``--idle-timeout``
seconds without a request, after ``--max-lifetime`` seconds in all, or on
SIGTERM/SIGINT; the ledger is rewritten after every request.
"""

from __future__ import annotations

import argparse
import base64
import copy
import hashlib
import http.server
import json
import os
import re
import signal
import socketserver
import sys
import threading
import time
import urllib.parse

# ---------------------------------------------------------------------------
# usage numbers


def usage_for(k: int, reasoning: bool = False) -> dict:
    """Usage of the k-th response served, in Anthropic's terms (non-overlapping)."""
    return {
        "input_tokens": 1000 + 37 * k,
        "output_tokens": 50 + 11 * k,
        "cache_read_input_tokens": 300 + 23 * k,
        "cache_creation_input_tokens": 200 + 13 * k,
        "reasoning_tokens": (10 + 3 * k) if reasoning else 0,
    }


# ---------------------------------------------------------------------------
# ledger


class Ledger:
    """Every request and response, kept in memory and rewritten to a JSON file."""

    def __init__(self, path: str | None, meta: dict | None = None):
        self.path = path
        self.meta = dict(meta or {})
        self.entries: list[dict] = []
        self.lock = threading.Lock()
        self.flush()

    def add(self, entry: dict) -> None:
        with self.lock:
            entry["index"] = len(self.entries)
            entry["time"] = time.time()
            self.entries.append(entry)
            self._write()

    def note(self, **kw) -> None:
        """Record harness facts (the typed prompts, the agent's exit status)."""
        with self.lock:
            self.meta.update(kw)
            self._write()

    def flush(self) -> None:
        with self.lock:
            self._write()

    def snapshot(self) -> dict:
        with self.lock:
            return {"meta": copy.deepcopy(self.meta), "entries": copy.deepcopy(self.entries)}

    def _write(self) -> None:
        if not self.path:
            return
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"meta": self.meta, "entries": self.entries}, f, indent=1, ensure_ascii=False)
            f.write("\n")
        os.replace(tmp, self.path)


# ---------------------------------------------------------------------------
# the script


class Script:
    """Scripted responses per channel, handed out in order."""

    CHANNELS = ("main", "subagent", "compact")

    def __init__(self, scenario: dict):
        self.scenario = scenario
        self.name = scenario.get("name", "scenario")
        self.cursor = {c: 0 for c in self.CHANNELS}
        self.lock = threading.Lock()

    @property
    def subagent_marker(self) -> str | None:
        return self.scenario.get("subagent_marker")

    def next_step(self, channel: str) -> tuple[int | None, dict]:
        """The next step of ``channel``: (its index, the step); index None when unscripted."""
        with self.lock:
            steps = self.scenario.get(channel) or []
            i = self.cursor.get(channel, 0)
            if i < len(steps):
                self.cursor[channel] = i + 1
                return i, copy.deepcopy(steps[i])
            self.cursor[channel] = i + 1
            return None, {"text": f"(unscripted {channel} response {i})", "unscripted": True}

    def remaining(self) -> dict:
        with self.lock:
            return {c: max(0, len(self.scenario.get(c) or []) - self.cursor[c]) for c in self.CHANNELS}


# ---------------------------------------------------------------------------
# helpers shared by the API handlers


def _ids(prefix: str, *parts) -> str:
    h = hashlib.sha256("/".join(str(p) for p in parts).encode()).hexdigest()
    return prefix + h[:24]


def _text_of_content(content) -> str:
    """Plain text of an Anthropic or OpenAI content value (string or block list)."""
    if isinstance(content, str):
        return content
    out = []
    if isinstance(content, list):
        for b in content:
            if isinstance(b, dict) and b.get("type") in ("text", "input_text", "output_text"):
                out.append(b.get("text", ""))
    return "\n".join(out)


def _short(s: str, n: int = 400) -> str:
    return s if len(s) <= n else s[:n] + f"...[{len(s) - n} more chars]"


def _ledger_entry(api: str, req: "Handler", channel: str, model, stream: bool, user_texts: list[str],
                  tool_results: list[dict], tools_offered: list, thread_id: str | None = None, *,
                  first_user_text: bool = True, **api_specific) -> dict:
    """The ledger entry of a model request, before its step and response are known.

    The fields every API has come first, then ``api_specific`` in the order given, then
    ``thread_id`` (None where the request does not name the session)."""
    entry = {"api": api, "path": req.path_only, "method": req.command, "channel": channel,
             "model": model, "stream": stream, "last_user_text": user_texts[-1] if user_texts else ""}
    if first_user_text:
        entry["first_user_text"] = _short(user_texts[0]) if user_texts else ""
    entry["tool_results"] = tool_results
    entry["tools_offered"] = tools_offered
    entry.update(api_specific)
    entry["thread_id"] = thread_id
    return entry


def _take_step(srv: "ModelServer", entry: dict, channel: str, side_text) -> dict:
    """The step to serve: a side request gets ``side_text()`` and uses up no step, any other
    channel its next scripted step. Notes the step's index (and whether it is unscripted) in ``entry``."""
    if channel.startswith("side:"):
        step_index, step = None, {"text": side_text()}
    else:
        step_index, step = srv.script.next_step(channel)
    entry["step"] = step_index
    if step.get("unscripted"):
        entry["unscripted"] = True
    return step


def _serve_error(srv: "ModelServer", req: "Handler", entry: dict, err: dict, default_status: int,
                 id_header: str | None, error_body) -> None:
    """Serve a step's ``error`` as an HTTP error: its ``status`` (or ``default_status``) with the
    API's body ``error_body(err, status)``, whose ``error`` goes to the ledger, and a request id in
    the header ``id_header`` where the API sends one."""
    status = int(err.get("status", default_status))
    payload = error_body(err, status)
    entry["response"] = {"status": status, "error": payload["error"]}
    srv.ledger.add(entry)
    headers = {id_header: _ids("req_", srv.run_id, "err", len(srv.ledger.entries))} if id_header else None
    req.send_json(payload, status=status, headers=headers)


def _next_usage(srv: "ModelServer", step: dict) -> tuple[int, dict]:
    """k, the index of the response about to be served, and its usage (``usage_for``; reasoning
    tokens where the step has thinking)."""
    k = srv.next_usage()
    return k, usage_for(k, bool(step.get("thinking")))


def _call_id(prefix: str, srv: "ModelServer", k: int, i: int, n: int = 24) -> str:
    """The id of the i-th tool call of the k-th response."""
    return _ids(prefix, srv.run_id, k, i)[:len(prefix) + n]


# ---------------------------------------------------------------------------
# Anthropic Messages


def _anthropic_tools(body: dict) -> list[str]:
    return [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]


def _anthropic_system_text(body: dict) -> str:
    return _text_of_content(body.get("system") or "")


def _typed_text(content) -> str:
    """Text of a user message without the harness's ``<system-reminder>`` blocks."""
    if isinstance(content, str):
        return content
    out = []
    for b in content if isinstance(content, list) else []:
        if isinstance(b, dict) and b.get("type") in ("text", "input_text"):
            t = b.get("text", "")
            if not t.lstrip().startswith("<system-reminder>"):
                out.append(t)
    return "\n".join(out)


def _anthropic_user_texts(body: dict) -> list[str]:
    out = []
    for m in body.get("messages") or []:
        if m.get("role") == "user":
            out.append(_typed_text(m.get("content")))
    return out


def _anthropic_tool_results(body: dict) -> list[dict]:
    """tool_result blocks of the last user message (what the agent ran and sends back)."""
    msgs = body.get("messages") or []
    if not msgs or msgs[-1].get("role") != "user" or not isinstance(msgs[-1].get("content"), list):
        return []
    out = []
    for b in msgs[-1]["content"]:
        if isinstance(b, dict) and b.get("type") == "tool_result":
            c = b.get("content")
            out.append({"tool_use_id": b.get("tool_use_id"), "is_error": b.get("is_error"),
                        "content": c if isinstance(c, str) else _text_of_content(c)})
    return out


def _anthropic_session(body: dict) -> str | None:
    """Claude Code's session id, from ``metadata.user_id`` (a JSON string)."""
    uid = (body.get("metadata") or {}).get("user_id")
    try:
        return json.loads(uid).get("session_id") if isinstance(uid, str) else None
    except (ValueError, AttributeError):
        return None


COMPACT_PATTERNS = (
    "create a detailed summary of the conversation",
    "summary of the conversation so far",
    "CONTEXT CHECKPOINT COMPACTION",
    "handoff summary",
    "<state_snapshot>",
)


def _compact_or_subagent(srv: "ModelServer", user_texts: list[str], first: int = 2) -> str | None:
    """``compact`` for a compaction's summarisation request (by the last user text), ``subagent`` when
    one of the ``first`` user texts holds the scenario's subagent marker, else None."""
    last = user_texts[-1] if user_texts else ""
    if any(p.lower() in last.lower() for p in COMPACT_PATTERNS):
        return "compact"
    marker = srv.script.subagent_marker
    if marker and any(marker in t for t in user_texts[:first]):
        return "subagent"
    return None


def classify_anthropic(srv: "ModelServer", body: dict) -> str:
    """main, subagent, compact, or side:<kind> for a Messages request."""
    user_texts = _anthropic_user_texts(body)
    last = user_texts[-1] if user_texts else ""
    channel = _compact_or_subagent(srv, user_texts)
    # OpenCode 1.0 and 1.1 send a title request without tools that quotes the subagent's prompt,
    # marker included; a subagent's own requests always offer tools.
    if channel and not (channel == "subagent" and not _anthropic_tools(body)):
        return channel
    if not _anthropic_tools(body):
        low = (_anthropic_system_text(body) + "\n" + last).lower()
        if "title" in low:
            return "side:title"
        if "summar" in low:
            return "side:summary"
        if "quota" in last.lower() or body.get("max_tokens") == 1:
            return "side:quota"
        return "side:other"
    return "main"


def side_answer(kind: str, body: dict) -> str:
    if kind == "side:title":
        # Claude Code asks for JSON with a title; any short text is accepted otherwise
        sys_text = _anthropic_system_text(body) + json.dumps(body.get("output_format") or body.get("output_config") or "")
        if "json" in sys_text.lower():
            return json.dumps({"title": "Scripted test session"})
        return "Scripted test session"
    if kind == "side:summary":
        return "Scripted summary"
    return "ok"


def _anthropic_tool_use(call: dict, tools: list[str], ctx: tuple) -> tuple[str, dict]:
    """Concrete (name, input) of an abstract tool call for a Messages request."""
    if "name" in call:
        return call["name"], call.get("input", {})
    if call.get("tool") == "shell":
        name = "Bash" if "Bash" in tools or not tools else next((t for t in tools if "bash" in t.lower()), "Bash")
        return name, {"command": call["command"], "description": call.get("description", "Run " + call["command"])}
    if call.get("tool") == "subagent":
        name = next((t for t in ("Agent", "Task") if t in tools), "Agent")
        inp = {"description": call.get("description", "Scripted subtask"), "prompt": call["prompt"]}
        inp["subagent_type"] = call.get("subagent_type", "general-purpose")
        if "background" in call:
            inp["run_in_background"] = bool(call["background"])
        return name, inp
    raise ValueError(f"unknown abstract tool call {call!r}")


def handle_anthropic_messages(srv: "ModelServer", req: "Handler") -> None:
    body = req.json or {}
    channel = classify_anthropic(srv, body)
    stream = bool(body.get("stream"))
    tools = _anthropic_tools(body)
    user_texts = _anthropic_user_texts(body)
    entry = _ledger_entry("anthropic-messages", req, channel, body.get("model"), stream, user_texts,
                          _anthropic_tool_results(body), tools, _anthropic_session(body),
                          n_messages=len(body.get("messages") or []),
                          system_head=_short(_anthropic_system_text(body), 200),
                          thinking_requested=body.get("thinking"), max_tokens=body.get("max_tokens"))
    step = _take_step(srv, entry, channel, lambda: side_answer(channel, body))

    if "error" in step:
        return _serve_error(srv, req, entry, step["error"], 529, "request-id", lambda err, status: {
            "type": "error", "error": {"type": err.get("type", "overloaded_error"),
                                       "message": err.get("message", "Overloaded")}})

    k, u = _next_usage(srv, step)
    msg_id = _ids("msg_", srv.run_id, k)
    request_id = _ids("req_", srv.run_id, k)
    model = body.get("model") or "claude-sonnet-4-5"
    blocks = []
    thinking_cfg = body.get("thinking") or {}
    if step.get("thinking"):
        # as the API does: with display "omitted" only the signature is sent
        shown = "" if thinking_cfg.get("display") == "omitted" else step["thinking"]
        entry["thinking_display"] = thinking_cfg.get("display")
        blocks.append({"type": "thinking", "thinking": shown,
                       "signature": "sig-" + hashlib.sha256(step["thinking"].encode()).hexdigest()[:32]})
    if step.get("text"):
        blocks.append({"type": "text", "text": step["text"]})
    calls = []
    for i, call in enumerate(step.get("tool_calls") or []):
        name, inp = _anthropic_tool_use(call, tools, (srv.run_id, k, i))
        tid = _call_id("toolu_", srv, k, i)
        blocks.append({"type": "tool_use", "id": tid, "name": name, "input": inp})
        calls.append({"id": tid, "name": name, "input": inp, "abstract": call})
    stop_reason = "tool_use" if calls else "end_turn"
    usage = {"input_tokens": u["input_tokens"], "cache_creation_input_tokens": u["cache_creation_input_tokens"],
             "cache_read_input_tokens": u["cache_read_input_tokens"], "output_tokens": u["output_tokens"]}
    entry["response"] = {
        "status": 200, "id": msg_id, "request_id": request_id, "model": model,
        "text": step.get("text"), "thinking": step.get("thinking"),
        "thinking_sent": next((b["thinking"] for b in blocks if b["type"] == "thinking"), None),
        "tool_calls": calls, "stop_reason": stop_reason, "usage_k": k, "usage": usage,
    }
    srv.ledger.add(entry)
    headers = {"request-id": request_id, "anthropic-organization-id": "00000000-0000-0000-0000-000000000000"}

    if not stream:
        req.send_json({"id": msg_id, "type": "message", "role": "assistant", "model": model,
                       "content": blocks, "stop_reason": stop_reason, "stop_sequence": None,
                       "usage": dict(usage, service_tier="standard")}, headers=headers)
        return

    start_usage = dict(usage, output_tokens=srv.start_output_tokens(u["output_tokens"]), service_tier="standard")
    events = [("message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": start_usage}})]
    for idx, b in enumerate(blocks):
        if b["type"] == "thinking":
            events.append(("content_block_start", {"type": "content_block_start", "index": idx,
                                                   "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
            for piece in _chunks(b["thinking"]):
                events.append(("content_block_delta", {"type": "content_block_delta", "index": idx,
                                                       "delta": {"type": "thinking_delta", "thinking": piece}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": idx,
                                                   "delta": {"type": "signature_delta", "signature": b["signature"]}}))
        elif b["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": idx,
                                                   "content_block": {"type": "text", "text": ""}}))
            for piece in _chunks(b["text"]):
                events.append(("content_block_delta", {"type": "content_block_delta", "index": idx,
                                                       "delta": {"type": "text_delta", "text": piece}}))
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": idx,
                                                   "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}}))
            for piece in _chunks(json.dumps(b["input"])):
                events.append(("content_block_delta", {"type": "content_block_delta", "index": idx,
                                                       "delta": {"type": "input_json_delta", "partial_json": piece}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": idx}))
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                     "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    req.send_sse(events, headers=headers)


def handle_anthropic_count_tokens(srv: "ModelServer", req: "Handler") -> None:
    body = req.json or {}
    n = 100 + 7 * len(json.dumps(body.get("messages") or [])) // 32
    srv.ledger.add({"api": "anthropic-messages", "path": req.path_only, "method": req.command,
                    "channel": "side:count_tokens", "model": body.get("model"), "stream": False,
                    "last_user_text": (_anthropic_user_texts(body) or [""])[-1],
                    "response": {"status": 200, "input_tokens": n}})
    req.send_json({"input_tokens": n})


def _chunks(s: str, n: int = 24):
    if not s:
        return [""]
    return [s[i:i + n] for i in range(0, len(s), n)]


# ---------------------------------------------------------------------------
# OpenAI Responses


def _responses_tools(body: dict) -> list[dict]:
    """Offered tools, the functions inside a ``namespace`` tool included (with their namespace)."""
    out = []
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        name = t.get("name") or (t.get("function") or {}).get("name") or t.get("type")
        out.append({"name": name, "type": t.get("type"), "def": t, "namespace": None})
        if t.get("type") == "namespace":
            for sub in t.get("tools") or []:
                if isinstance(sub, dict) and sub.get("name"):
                    out.append({"name": sub["name"], "type": sub.get("type"), "def": sub, "namespace": name})
    return out


def _responses_items(body: dict) -> list:
    inp = body.get("input")
    if isinstance(inp, str):
        return [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": inp}]}]
    return inp if isinstance(inp, list) else []


def _responses_user_texts(body: dict) -> list[str]:
    out = []
    for it in _responses_items(body):
        if isinstance(it, dict) and it.get("role") == "user" and it.get("type", "message") == "message":
            out.append(_text_of_content(it.get("content")))
    return out


def _responses_tool_outputs(body: dict) -> list[dict]:
    """Tool outputs after the last assistant turn: what the agent ran and sends back."""
    items = _responses_items(body)
    tail = []
    for it in reversed(items):
        if not isinstance(it, dict):
            continue
        if it.get("type") in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            out = it.get("output")
            if isinstance(out, list):
                out = _text_of_content(out)
            elif isinstance(out, dict):
                out = out.get("content") if isinstance(out.get("content"), str) else json.dumps(out)
            tail.append({"call_id": it.get("call_id"), "type": it.get("type"), "output": out})
        elif it.get("type") in ("function_call", "custom_tool_call", "local_shell_call", "reasoning"):
            continue
        else:
            break
    return list(reversed(tail))


def classify_responses(srv: "ModelServer", body: dict) -> str:
    user_texts = _responses_user_texts(body)
    last = user_texts[-1] if user_texts else ""
    if channel := _compact_or_subagent(srv, user_texts, 3):
        return channel
    if not body.get("tools") and "title" in ((body.get("instructions") or "") + last).lower():
        return "side:title"
    return "main"


def _function_call(names: dict, name: str, args: dict, call_id: str, item_id: str) -> dict:
    item = {"type": "function_call", "id": item_id, "status": "completed", "call_id": call_id,
            "name": name, "arguments": json.dumps(args)}
    if (names.get(name) or {}).get("namespace"):
        item["namespace"] = names[name]["namespace"]
    return item


_AGENT_ID = re.compile(r'"(?:agent_id|id|target)"\s*:\s*"([^"]+)"')


def _responses_tool_call(call: dict, tools: list[dict], call_id: str, item_id: str, body: dict | None = None) -> dict:
    """The output item for an abstract tool call, using the shell tool the request offers."""
    names = {t["name"]: t for t in tools}
    if "name" in call:
        t = names.get(call["name"], {})
        if t.get("type") == "custom":
            return {"type": "custom_tool_call", "id": item_id, "status": "completed", "call_id": call_id,
                    "name": call["name"], "input": call.get("input", "")}
        return {"type": "function_call", "id": item_id, "status": "completed", "call_id": call_id,
                "name": call["name"], "arguments": json.dumps(call.get("input", {}))}
    if call.get("tool") == "shell":
        cmd = call["command"]
        if "exec_command" in names:
            return _function_call(names, "exec_command", {"cmd": cmd, "yield_time_ms": 10000}, call_id, item_id)
        if "shell_command" in names:
            return {"type": "function_call", "id": item_id, "status": "completed", "call_id": call_id,
                    "name": "shell_command", "arguments": json.dumps({"command": cmd})}
        if "shell" in names:
            return {"type": "function_call", "id": item_id, "status": "completed", "call_id": call_id,
                    "name": "shell", "arguments": json.dumps({"command": ["bash", "-lc", cmd]})}
        if "local_shell" in names:
            return {"type": "local_shell_call", "id": item_id, "status": "completed", "call_id": call_id,
                    "action": {"type": "exec", "command": ["bash", "-lc", cmd]}}
        raise ValueError(f"no shell tool offered: {sorted(names)}")
    if call.get("tool") == "subagent":
        name = next((n for n in ("spawn_agent", "agent", "task") if n in names), None)
        if not name:
            raise ValueError(f"no subagent tool offered: {sorted(names)}")
        return _function_call(names, name, {"message": call["prompt"]}, call_id, item_id)
    if call.get("tool") == "wait_subagent":
        # wait for the agent that the previous spawn call started: its id is in that call's output
        ids = [m.group(1) for r in _responses_tool_outputs(body or {}) for m in [_AGENT_ID.search(r.get("output") or "")] if m]
        if not ids:
            raise ValueError("wait_subagent: no spawned agent id in the tool outputs")
        return _function_call(names, "wait_agent", {"targets": ids[-1:], "timeout_ms": 30000}, call_id, item_id)
    raise ValueError(f"unknown abstract tool call {call!r}")


def handle_openai_responses(srv: "ModelServer", req: "Handler") -> None:
    body = req.json or {}
    channel = classify_responses(srv, body)
    stream = bool(body.get("stream"))
    tools = _responses_tools(body)
    user_texts = _responses_user_texts(body)
    # Codex names its thread (the session id of its rollout) in the request
    thread_id = (body.get("client_metadata") or {}).get("thread_id") or body.get("prompt_cache_key")
    entry = _ledger_entry("openai-responses", req, channel, body.get("model"), stream, user_texts,
                          _responses_tool_outputs(body), [t["name"] for t in tools], thread_id,
                          first_user_text=False, n_items=len(_responses_items(body)),
                          reasoning_requested=body.get("reasoning"),
                          instructions_head=_short(body.get("instructions") or "", 200))
    step = _take_step(srv, entry, channel, lambda: "Scripted test session")

    if "error" in step:
        return _serve_error(srv, req, entry, step["error"], 500, "x-request-id", lambda err, status: {
            "error": {"message": err.get("message", "scripted server error"),
                      "type": err.get("type", "server_error"), "code": err.get("code")}})

    k, u = _next_usage(srv, step)
    reasoning = bool(step.get("thinking"))
    resp_id = _ids("resp_", srv.run_id, k)
    model = body.get("model") or "gpt-5"
    items = []
    if reasoning:
        items.append({"type": "reasoning", "id": _ids("rs_", srv.run_id, k),
                      "summary": [{"type": "summary_text", "text": step["thinking"]}],
                      "content": None, "encrypted_content": None})
    if step.get("text"):
        items.append({"type": "message", "id": _ids("msg_", srv.run_id, k), "role": "assistant",
                      "status": "completed",
                      "content": [{"type": "output_text", "text": step["text"], "annotations": []}]})
    calls = []
    for i, call in enumerate(step.get("tool_calls") or []):
        call_id = _call_id("call_", srv, k, i)
        item = _responses_tool_call(call, tools, call_id, _ids("fc_", srv.run_id, k, i), body)
        items.append(item)
        rec = {"id": call_id, "type": item["type"], "name": item.get("name", "local_shell"),
               "namespace": item.get("namespace"), "abstract": call}
        if "arguments" in item:
            rec["input"] = json.loads(item["arguments"])
        elif "input" in item:
            rec["input"] = item["input"]
        else:
            rec["input"] = item.get("action")
        calls.append(rec)
    usage = {
        "input_tokens": u["input_tokens"] + u["cache_read_input_tokens"],
        "input_tokens_details": {"cached_tokens": u["cache_read_input_tokens"]},
        "output_tokens": u["output_tokens"],
        "output_tokens_details": {"reasoning_tokens": u["reasoning_tokens"]},
    }
    usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    entry["response"] = {"status": 200, "id": resp_id, "model": model, "text": step.get("text"),
                         "thinking": step.get("thinking"), "tool_calls": calls, "usage_k": k, "usage": usage}
    srv.ledger.add(entry)
    created = int(time.time())
    base = {"id": resp_id, "object": "response", "created_at": created, "model": model,
            "status": "in_progress", "output": [], "usage": None}
    done = dict(base, status="completed", output=items, usage=usage)
    if not stream:
        req.send_json(done)
        return
    events = [("response.created", {"type": "response.created", "response": base}),
              ("response.in_progress", {"type": "response.in_progress", "response": base})]
    for oi, item in enumerate(items):
        if item["type"] == "reasoning":
            events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": oi,
                                                          "item": dict(item, summary=[])}))
            events.append(("response.reasoning_summary_part.added", {"type": "response.reasoning_summary_part.added",
                                                                     "item_id": item["id"], "output_index": oi, "summary_index": 0,
                                                                     "part": {"type": "summary_text", "text": ""}}))
            for piece in _chunks(step["thinking"]):
                events.append(("response.reasoning_summary_text.delta", {"type": "response.reasoning_summary_text.delta",
                                                                         "item_id": item["id"], "output_index": oi,
                                                                         "summary_index": 0, "delta": piece}))
            events.append(("response.reasoning_summary_text.done", {"type": "response.reasoning_summary_text.done",
                                                                    "item_id": item["id"], "output_index": oi,
                                                                    "summary_index": 0, "text": step["thinking"]}))
        elif item["type"] == "message":
            events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": oi,
                                                          "item": dict(item, status="in_progress", content=[])}))
            events.append(("response.content_part.added", {"type": "response.content_part.added", "item_id": item["id"],
                                                           "output_index": oi, "content_index": 0,
                                                           "part": {"type": "output_text", "text": "", "annotations": []}}))
            for piece in _chunks(step["text"]):
                events.append(("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                              "output_index": oi, "content_index": 0, "delta": piece}))
            events.append(("response.output_text.done", {"type": "response.output_text.done", "item_id": item["id"],
                                                         "output_index": oi, "content_index": 0, "text": step["text"]}))
        elif item["type"] == "function_call":
            events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": oi,
                                                          "item": dict(item, arguments="", status="in_progress")}))
            events.append(("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta",
                                                                      "item_id": item["id"], "output_index": oi,
                                                                      "delta": item["arguments"]}))
            events.append(("response.function_call_arguments.done", {"type": "response.function_call_arguments.done",
                                                                     "item_id": item["id"], "output_index": oi,
                                                                     "arguments": item["arguments"]}))
        else:
            events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": oi,
                                                          "item": item}))
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": oi, "item": item}))
    events.append(("response.completed", {"type": "response.completed", "response": done}))
    req.send_sse(events, headers={"x-request-id": _ids("req_", srv.run_id, k)})


def handle_models(srv: "ModelServer", req: "Handler") -> None:
    srv.ledger.add({"api": "models", "path": req.path_only, "method": req.command, "channel": "side:models",
                    "response": {"status": 200}})
    if "anthropic-version" in {k.lower() for k in req.headers.keys()} or "x-api-key" in {k.lower() for k in req.headers.keys()}:
        req.send_json({"data": [{"type": "model", "id": "claude-sonnet-4-5", "display_name": "Claude Sonnet 4.5",
                                 "created_at": "2025-09-29T00:00:00Z"}], "has_more": False, "first_id": None, "last_id": None})
    else:
        req.send_json({"object": "list", "data": [{"id": "gpt-5", "object": "model", "created": 0, "owned_by": "test"}],
                       "models": []})


# ---------------------------------------------------------------------------
# OpenAI Chat Completions


_DATETIME_PREFIX = re.compile(r"^\s*<current_datetime>.*?</current_datetime>\s*", re.S)


def _chat_messages(body: dict) -> list[dict]:
    return [m for m in body.get("messages") or [] if isinstance(m, dict)]


def _chat_tools(body: dict) -> list[str]:
    out = []
    for t in body.get("tools") or []:
        if isinstance(t, dict):
            out.append((t.get("function") or {}).get("name") or t.get("name"))
    return out


def _chat_user_texts(body: dict) -> list[str]:
    """Texts of the user messages (Copilot CLI's ``<current_datetime>`` prefix left out)."""
    return [_DATETIME_PREFIX.sub("", _typed_text(m.get("content")), count=1)
            for m in _chat_messages(body) if m.get("role") == "user"]


def _chat_system_text(body: dict) -> str:
    return "\n".join(_text_of_content(m.get("content")) for m in _chat_messages(body)
                     if m.get("role") in ("system", "developer"))


def _chat_tool_results(body: dict) -> list[dict]:
    """``tool`` messages after the last assistant message: what the agent ran and sends back."""
    out = []
    for m in reversed(_chat_messages(body)):
        if m.get("role") != "tool":
            break
        out.append({"tool_call_id": m.get("tool_call_id"), "content": _text_of_content(m.get("content"))})
    return list(reversed(out))


def classify_chat(srv: "ModelServer", body: dict) -> str:
    user_texts = _chat_user_texts(body)
    last = user_texts[-1] if user_texts else ""
    channel = _compact_or_subagent(srv, user_texts)
    # As in classify_anthropic: a subagent's requests offer tools, a title request none.
    if channel and not (channel == "subagent" and not _chat_tools(body)):
        return channel
    if not _chat_tools(body):
        if srv.script.scenario.get("main_without_tools"):
            # agents that offer no tools (Aider edits through the answer's text): every request is
            # the session's own, but for a summary of the history, which the system prompt asks for
            return "side:summary" if "summar" in _chat_system_text(body)[:200].lower() else "main"
        low = (_chat_system_text(body) + "\n" + last).lower()
        if any(p.lower() in low for p in COMPACT_PATTERNS):
            return "compact"
        if "title" in low or "name for" in low:
            return "side:title"
        if "summar" in low:
            return "side:summary"
        return "side:other"
    return "main"


_AGENT_ID_TEXT = re.compile(r"agent[_ ]?id[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9_.\-]+)", re.I)


def _chat_tool_call(call: dict, tools: list[str], body: dict) -> tuple[str, dict]:
    """Concrete (name, arguments) of an abstract tool call for a Chat Completions request."""
    if "name" in call:
        return call["name"], call.get("input", {})
    if call.get("tool") == "shell":
        name = next((t for t in ("bash", "shell", "powershell") if t in tools), None) \
            or next((t for t in tools if "bash" in t.lower() or "shell" in t.lower()), None)
        if not name:
            raise ValueError(f"no shell tool offered: {tools}")
        return name, {"command": call["command"], "description": call.get("description", "Run " + call["command"])}
    if call.get("tool") == "subagent":
        if "task" not in tools:
            raise ValueError(f"no subagent tool offered: {tools}")
        # Copilot CLI's task tool: name, prompt, agent_type and description are required
        return "task", {"name": call.get("agent_name", "scripted-subtask"), "description": call.get("description", "Scripted subtask"),
                        "prompt": call["prompt"], "agent_type": call.get("subagent_type", "general-purpose"),
                        "mode": "background" if call.get("background") else "sync"}
    if call.get("tool") == "wait_subagent":
        ids = [m.group(1) for r in _chat_tool_results(body) for m in [_AGENT_ID_TEXT.search(r.get("content") or "")] if m]
        if not ids:
            raise ValueError("wait_subagent: no agent id in the tool results")
        return "read_agent", {"agent_id": ids[-1], "wait": True, "timeout": 60}
    raise ValueError(f"unknown abstract tool call {call!r}")


def handle_chat_completions(srv: "ModelServer", req: "Handler") -> None:
    """OpenAI Chat Completions (``POST /v1/chat/completions``), streaming or not."""
    body = req.json or {}
    channel = classify_chat(srv, body)
    stream = bool(body.get("stream"))
    tools = _chat_tools(body)
    user_texts = _chat_user_texts(body)
    # the request does not name the session: no thread_id
    entry = _ledger_entry("openai-chat-completions", req, channel, body.get("model"), stream, user_texts,
                          _chat_tool_results(body), tools, n_messages=len(_chat_messages(body)),
                          system_head=_short(_chat_system_text(body), 200),
                          reasoning_requested=body.get("reasoning_effort") or body.get("reasoning"),
                          max_tokens=body.get("max_tokens") or body.get("max_completion_tokens"),
                          initiator=req.headers.get("x-initiator"))
    step = _take_step(srv, entry, channel, lambda: side_answer(channel, {}))

    if "error" in step:
        return _serve_error(srv, req, entry, step["error"], 500, "x-request-id", lambda err, status: {
            "error": {"message": err.get("message", "scripted server error"),
                      "type": err.get("type", "server_error"), "param": None, "code": err.get("code")}})

    k, u = _next_usage(srv, step)
    reasoning = bool(step.get("thinking"))
    resp_id = _ids("chatcmpl-", srv.run_id, k)
    model = body.get("model") or "gpt-4.1"
    calls = []
    for i, call in enumerate(step.get("tool_calls") or []):
        name, args = _chat_tool_call(call, tools, body)
        cid = _call_id("call_", srv, k, i)
        calls.append({"id": cid, "name": name, "input": args, "arguments": json.dumps(args), "abstract": call})
    finish = "tool_calls" if calls else "stop"
    usage = {"prompt_tokens": u["input_tokens"] + u["cache_read_input_tokens"],
             "completion_tokens": u["output_tokens"],
             "total_tokens": u["input_tokens"] + u["cache_read_input_tokens"] + u["output_tokens"],
             "prompt_tokens_details": {"cached_tokens": u["cache_read_input_tokens"]},
             "completion_tokens_details": {"reasoning_tokens": u["reasoning_tokens"]}}
    entry["response"] = {"status": 200, "id": resp_id, "model": model, "text": step.get("text"),
                         "thinking": step.get("thinking"),
                         "tool_calls": [{kk: c[kk] for kk in ("id", "name", "input", "abstract")} for c in calls],
                         "finish_reason": finish, "usage_k": k, "usage": usage}
    srv.ledger.add(entry)
    created = int(time.time())
    headers = {"x-request-id": _ids("req_", srv.run_id, k)}
    if not stream:
        msg = {"role": "assistant", "content": step.get("text"), "refusal": None}
        if reasoning:
            msg[srv.script.scenario.get("chat_reasoning_field") or "reasoning_content"] = step["thinking"]
        if calls:
            msg["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]
        req.send_json({"id": resp_id, "object": "chat.completion", "created": created, "model": model,
                       "choices": [{"index": 0, "message": msg, "finish_reason": finish, "logprobs": None}],
                       "usage": usage}, headers=headers)
        return

    def chunk(delta=None, finish_reason=None, **extra):
        c = {"id": resp_id, "object": "chat.completion.chunk", "created": created, "model": model,
             "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}]}
        c.update(extra)
        return c

    chunks = [chunk({"role": "assistant", "content": ""})]
    if reasoning:
        # the reasoning delta of OpenAI-compatible servers, ``reasoning_content`` (vLLM, DeepSeek), or
        # ``reasoning_text`` (GitHub Copilot's API) when the scenario's ``chat_reasoning_field`` says so
        field = srv.script.scenario.get("chat_reasoning_field") or "reasoning_content"
        for piece in _chunks(step["thinking"]):
            chunks.append(chunk({field: piece}))
    if step.get("text"):
        for piece in _chunks(step["text"]):
            chunks.append(chunk({"content": piece}))
    for i, c in enumerate(calls):
        chunks.append(chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                             "function": {"name": c["name"], "arguments": ""}}]}))
        for piece in _chunks(c["arguments"], 40):
            chunks.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}))
    chunks.append(chunk({}, finish))
    last = chunk()
    last["choices"] = []
    last["usage"] = usage
    chunks.append(last)
    req.send_sse_data(chunks, done="[DONE]", headers=headers)


# ---------------------------------------------------------------------------
# Gemini generateContent / streamGenerateContent


def _gemini_contents(body: dict) -> list[dict]:
    return [c for c in body.get("contents") or [] if isinstance(c, dict)]


def _gemini_user_texts(body: dict) -> list[str]:
    """Text of each user content (function responses left out; Gemini CLI's ``<session_context>`` too)."""
    out = []
    for c in _gemini_contents(body):
        if c.get("role", "user") != "user":
            continue
        texts = [p.get("text", "") for p in c.get("parts") or [] if isinstance(p, dict) and "text" in p
                 and not p.get("text", "").lstrip().startswith("<session_context>")]
        if texts:
            out.append("\n".join(texts))
    return out


def _gemini_tools(body: dict) -> list[str]:
    return [f.get("name") for t in body.get("tools") or [] if isinstance(t, dict)
            for f in t.get("functionDeclarations") or [] if isinstance(f, dict)]


def _gemini_tool_schema(body: dict, name: str) -> dict:
    for t in body.get("tools") or []:
        for f in (t or {}).get("functionDeclarations") or []:
            if f.get("name") == name:
                return f.get("parametersJsonSchema") or f.get("parameters") or {}
    return {}


def _gemini_system_text(body: dict) -> str:
    si = body.get("systemInstruction") or {}
    if isinstance(si, str):
        return si
    return "\n".join(p.get("text", "") for p in si.get("parts") or [] if isinstance(p, dict))


def _gemini_tool_results(body: dict) -> list[dict]:
    cs = _gemini_contents(body)
    if not cs or cs[-1].get("role", "user") != "user":
        return []
    out = []
    for p in cs[-1].get("parts") or []:
        fr = p.get("functionResponse") if isinstance(p, dict) else None
        if fr:
            out.append({"id": fr.get("id"), "name": fr.get("name"), "response": _short(json.dumps(fr.get("response")), 600)})
    return out


def _schema_example(s, key: str = ""):
    """A value that satisfies a JSON schema well enough (Gemini CLI's JSON side requests)."""
    if not isinstance(s, dict):
        return "ok"
    if s.get("enum"):
        return s["enum"][0]
    t = s.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    t = (t or "").lower()
    if t == "object" or "properties" in s:
        return {k: _schema_example(v, k) for k, v in (s.get("properties") or {}).items()}
    if t == "array":
        return []
    if t in ("integer", "number"):
        return max(1, s.get("minimum", 1))
    if t == "boolean":
        return False
    return f"scripted {key}".strip()


def _fill_schema(s: dict, text: str):
    """A value of schema ``s`` whose required strings are ``text`` (complete_task's ``result``)."""
    t = s.get("type")
    if t == "object" or "properties" in s:
        props = s.get("properties") or {}
        return {k: _fill_schema(props.get(k) or {}, text) for k in (s.get("required") or list(props)[:1])}
    if t in (None, "string"):
        return text
    return _schema_example(s)


def classify_gemini(srv: "ModelServer", body: dict) -> str:
    user_texts = _gemini_user_texts(body)
    last = user_texts[-1] if user_texts else ""
    if channel := _compact_or_subagent(srv, user_texts):
        return channel
    if not _gemini_tools(body):
        gc = body.get("generationConfig") or {}
        if gc.get("responseJsonSchema") or gc.get("responseSchema") or gc.get("responseMimeType") == "application/json":
            return "side:json"
        low = (_gemini_system_text(body) + "\n" + last).lower()
        if "summar" in low:
            return "side:summary"
        return "side:other"
    return "main"


def _gemini_function_call(call: dict, body: dict) -> tuple[str, dict]:
    """Concrete (name, args) of an abstract tool call for a Gemini request."""
    tools = _gemini_tools(body)
    if "name" in call:
        return call["name"], call.get("input", {})
    if call.get("tool") == "shell":
        if "run_shell_command" not in tools:
            raise ValueError(f"no shell tool offered (Gemini CLI offers it with --yolo): {tools}")
        return "run_shell_command", {"command": call["command"], "description": call.get("description", "Run " + call["command"])}
    if call.get("tool") == "subagent":
        if "invoke_agent" not in tools:
            raise ValueError(f"no subagent tool offered: {tools}")
        return "invoke_agent", {"agent_name": call.get("agent_name", "generalist"), "prompt": call["prompt"]}
    if call.get("tool") == "finish_subagent":
        # a Gemini CLI subagent ends by calling complete_task with its declared output
        if "complete_task" not in tools:
            raise ValueError(f"no complete_task tool offered: {tools}")
        return "complete_task", _fill_schema(_gemini_tool_schema(body, "complete_task"), call["result"])
    raise ValueError(f"unknown abstract tool call {call!r}")


def handle_gemini_generate(srv: "ModelServer", req: "Handler") -> None:
    """Gemini ``models/<model>:generateContent`` and ``:streamGenerateContent`` (``?alt=sse``)."""
    body = req.json or {}
    m = re.search(r"/models/([^/:]+):(\w+)$", req.path_only)
    model, action = (m.group(1), m.group(2)) if m else ("gemini", "generateContent")
    stream = action.lower().startswith("stream")
    channel = classify_gemini(srv, body)
    user_texts = _gemini_user_texts(body)
    gc = body.get("generationConfig") or {}
    # the request does not name the session: no thread_id
    entry = _ledger_entry("gemini-generate-content", req, channel, model, stream, user_texts,
                          _gemini_tool_results(body), _gemini_tools(body),
                          n_contents=len(_gemini_contents(body)),
                          system_head=_short(_gemini_system_text(body), 200),
                          thinking_requested=gc.get("thinkingConfig"))

    def side_text():
        if channel == "side:json":
            return json.dumps(_schema_example(gc.get("responseJsonSchema") or gc.get("responseSchema")))
        return "Scripted test session"

    step = _take_step(srv, entry, channel, side_text)

    if "error" in step:
        return _serve_error(srv, req, entry, step["error"], 503, None, lambda err, status: {
            "error": {"code": status, "message": err.get("message", "The model is overloaded."),
                      "status": err.get("type", "UNAVAILABLE")}})

    k, u = _next_usage(srv, step)
    reasoning = bool(step.get("thinking"))
    resp_id = _ids("", srv.run_id, k)[:22]
    parts_chunks = []  # one list of parts per streamed chunk
    if reasoning:
        # Gemini CLI reads a thought from parts[0] of its chunk, "**Subject**" then the description
        parts_chunks.append([{"text": step["thinking"], "thought": True}])
    if step.get("text"):
        parts_chunks += [[{"text": piece}] for piece in _chunks(step["text"])]
    calls = []
    for i, call in enumerate(step.get("tool_calls") or []):
        name, args = _gemini_function_call(call, body)
        # the API's optional call id (Gemini CLI logs it as "<name>__<id>")
        cid = _call_id("fc_", srv, k, i, 20)
        part = {"functionCall": {"id": cid, "name": name, "args": args}}
        if i == 0:
            part["thoughtSignature"] = base64.b64encode(f"sig-{srv.run_id}-{k}".encode()).decode()
        parts_chunks.append([part])
        calls.append({"id": cid, "name": name, "input": args, "abstract": call})
    if not parts_chunks:
        parts_chunks.append([{"text": ""}])
    # Gemini's counts: promptTokenCount includes the cached part; thoughts are beside candidates
    usage = {"promptTokenCount": u["input_tokens"] + u["cache_read_input_tokens"],
             "cachedContentTokenCount": u["cache_read_input_tokens"],
             "candidatesTokenCount": u["output_tokens"]}
    if reasoning:
        usage["thoughtsTokenCount"] = u["reasoning_tokens"]
    usage["totalTokenCount"] = usage["promptTokenCount"] + usage["candidatesTokenCount"] + usage.get("thoughtsTokenCount", 0)
    usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": usage["promptTokenCount"]}]
    usage["cacheTokensDetails"] = [{"modality": "TEXT", "tokenCount": usage["cachedContentTokenCount"]}]
    entry["response"] = {"status": 200, "id": resp_id, "model": model, "text": step.get("text"),
                         "thinking": step.get("thinking"), "tool_calls": calls, "usage_k": k, "usage": usage}
    srv.ledger.add(entry)

    def chunk(parts, last):
        cand = {"content": {"role": "model", "parts": parts}, "index": 0}
        out = {"candidates": [cand], "modelVersion": model, "responseId": resp_id}
        if last:
            cand["finishReason"] = "STOP"
            out["usageMetadata"] = usage
        return out

    if not stream:
        req.send_json(chunk([p for ch in parts_chunks for p in ch], True))
        return
    req.send_sse_data([chunk(parts, i == len(parts_chunks) - 1) for i, parts in enumerate(parts_chunks)])


def handle_gemini_count_tokens(srv: "ModelServer", req: "Handler") -> None:
    body = req.json or {}
    n = 100 + 7 * len(json.dumps(body.get("contents") or [])) // 32
    srv.ledger.add({"api": "gemini-generate-content", "path": req.path_only, "method": req.command,
                    "channel": "side:count_tokens", "response": {"status": 200, "input_tokens": n}})
    req.send_json({"totalTokens": n})


# ---------------------------------------------------------------------------
# HTTP plumbing

# (method, path regex, handler); the first match wins
ROUTES = [
    ("POST", r"/v1/messages/count_tokens", handle_anthropic_count_tokens),
    ("POST", r"/v1/messages", handle_anthropic_messages),
    ("POST", r"(/v1)?/responses", handle_openai_responses),
    ("GET", r"(/v1)?/models(/.*)?", handle_models),
    ("POST", r"(/v1)?/chat/completions", handle_chat_completions),
    ("POST", r"/v1(beta)?/models/[^/]+:(stream)?[gG]enerateContent", handle_gemini_generate),
    ("POST", r"/v1(beta)?/models/[^/]+:countTokens", handle_gemini_count_tokens),
]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "agentlog-test-model-server/1"

    def log_message(self, fmt, *args):  # quiet; everything goes to the ledger
        pass

    @property
    def srv(self) -> "ModelServer":
        return self.server.model_server  # type: ignore[attr-defined]

    def _dispatch(self):
        self.srv.touch()
        self.path_only = urllib.parse.urlsplit(self.path).path
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("content-encoding", "").lower() in ("gzip",):
            import gzip
            raw = gzip.decompress(raw)
        elif self.headers.get("content-encoding", "").lower() in ("zstd", "br"):
            self.srv.ledger.add({"path": self.path_only, "method": self.command, "channel": "side:undecodable",
                                 "response": {"status": 415}})
            self.send_json({"error": "unsupported content-encoding"}, status=415)
            return
        self.raw = raw
        try:
            self.json = json.loads(raw) if raw else None
        except ValueError:
            self.json = None
        if self.srv.dump_dir and raw:
            n = self.srv.dump_counter()
            with open(os.path.join(self.srv.dump_dir, f"{n:03d}-{self.command}-{self.path_only.strip('/').replace('/', '_')}.json"), "wb") as f:
                f.write(raw)
        for method, pattern, fn in ROUTES:
            if method == self.command and re.fullmatch(pattern, self.path_only):
                try:
                    fn(self.srv, self)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                except Exception as e:  # keep serving; record the failure
                    self.srv.ledger.add({"path": self.path_only, "method": self.command, "channel": "server-error",
                                         "error": repr(e), "response": {"status": 500}})
                    try:
                        self.send_json({"error": {"message": f"test server error: {e!r}"}}, status=500)
                    except OSError:
                        pass
                return
        # anything else (probes, telemetry that slipped through): answer 200 {} and record it
        self.srv.ledger.add({"path": self.path_only, "method": self.command, "channel": "side:unrouted",
                             "response": {"status": 404 if self.command == "POST" else 200}})
        self.send_json({}, status=404 if self.command == "POST" else 200)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _dispatch

    def do_HEAD(self):
        self.srv.touch()
        self.path_only = urllib.parse.urlsplit(self.path).path
        self.srv.ledger.add({"path": self.path_only, "method": "HEAD", "channel": "side:probe", "response": {"status": 200}})
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def _send_body(self, data: bytes, status=200, headers=None, sse=False):
        self.send_response(status)
        if sse:
            self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.send_header("cache-control", "no-cache")
        else:
            self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        if sse:
            self.wfile.flush()

    def send_json(self, obj, status=200, headers=None):
        self._send_body(json.dumps(obj).encode(), status, headers)

    def send_sse(self, events, headers=None):
        chunks = []
        for name, data in events:
            chunks.append(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self._send_body(b"".join(chunks), headers=headers, sse=True)

    def send_sse_data(self, objs, done: str | None = None, headers=None):
        """Server-sent events of ``data:`` lines only (Gemini, Chat Completions), optionally ending
        with ``data: <done>``."""
        lines = [f"data: {json.dumps(o)}\n\n" for o in objs]
        if done:
            lines.append(f"data: {done}\n\n")
        self._send_body("".join(lines).encode(), headers=headers, sse=True)


class _TCPServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class ModelServer:
    """The server: start(), .port, stop(); stops by itself when idle or too old."""

    def __init__(self, scenario: dict, ledger_path: str | None = None, port: int = 0,
                 idle_timeout: float = 120.0, max_lifetime: float = 900.0, dump_dir: str | None = None,
                 run_id: str | None = None, start_output: str = "one"):
        self.script = Script(scenario)
        self.run_id = run_id or f"{scenario.get('name', 'run')}-{os.getpid()}-{time.time_ns()}"
        self.ledger = Ledger(ledger_path, {"scenario": scenario})
        self.idle_timeout = idle_timeout
        self.max_lifetime = max_lifetime
        self.dump_dir = dump_dir
        if dump_dir:
            os.makedirs(dump_dir, exist_ok=True)
        self.start_output = start_output
        self._k = 0
        self._dump_n = 0
        self._lock = threading.Lock()
        self._last = time.monotonic()
        self._started = time.monotonic()
        self.httpd = _TCPServer(("127.0.0.1", port), Handler)
        self.httpd.model_server = self  # type: ignore[attr-defined]
        self.port = self.httpd.server_address[1]
        self._thread: threading.Thread | None = None
        self._watch: threading.Thread | None = None
        self.stopped = threading.Event()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def next_usage(self) -> int:
        with self._lock:
            k = self._k
            self._k += 1
            return k

    def start_output_tokens(self, final: int) -> int:
        """output_tokens in message_start: 1 as the real API sends (default), or the final count."""
        return final if self.start_output == "final" else 1

    def dump_counter(self) -> int:
        with self._lock:
            self._dump_n += 1
            return self._dump_n

    def touch(self) -> None:
        self._last = time.monotonic()

    def start(self) -> "ModelServer":
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self._thread.start()
        self._watch = threading.Thread(target=self._watchdog, daemon=True)
        self._watch.start()
        return self

    def _watchdog(self) -> None:
        while not self.stopped.wait(0.5):
            now = time.monotonic()
            if now - self._last > self.idle_timeout or now - self._started > self.max_lifetime:
                self.ledger.note(stopped_by="idle-timeout" if now - self._last > self.idle_timeout else "max-lifetime")
                self.stop()
                return

    def stop(self) -> None:
        if self.stopped.is_set():
            return
        self.stopped.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.ledger.flush()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", required=True, help="scenario JSON file")
    ap.add_argument("--ledger", required=True, help="ledger JSON file to write")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--idle-timeout", type=float, default=120.0)
    ap.add_argument("--max-lifetime", type=float, default=900.0)
    ap.add_argument("--dump-requests", metavar="DIR", help="also write every request body to DIR")
    ap.add_argument("--start-output", choices=("one", "final"), default="one",
                    help="output_tokens in message_start: 1 as the real API (default), or the final count")
    a = ap.parse_args(argv)
    with open(a.scenario, encoding="utf-8") as f:
        scenario = json.load(f)
    srv = ModelServer(scenario, a.ledger, a.port, a.idle_timeout, a.max_lifetime, a.dump_requests,
                      start_output=a.start_output)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: srv.stop())
    srv.start()
    print(f"PORT {srv.port}", flush=True)
    srv.stopped.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
