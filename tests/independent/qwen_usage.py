"""Independent Qwen Code token accounting, per session file, for checking agentlog.

usage: qwen_usage.py FILE...

Rule (tests/agents/FINDINGS-qwen.md, section 4): Qwen Code writes a `system` record with
`subtype: "ui_telemetry"` and `systemPayload.uiEvent["event.name"] == "qwen-code.api_response"`
into the main session file for every model response of the session (main conversation,
subagents, compression, background memory agent), each once. The same counts are repeated in
the `usageMetadata` of `assistant` records (the main conversation's right after their telemetry
record, whose `uuid` is their `parentUuid`; a subagent's in its own transcript under
`subagents/`, which has no telemetry): those count only when no telemetry record is their
parent and the file is not a subagent transcript.

Counts: `input_token_count` / `promptTokenCount` includes `cached_content_token_count` /
`cachedContentTokenCount`. Through an OpenAI-compatible API the completion
(`output_token_count` / `candidatesTokenCount`) includes the thoughts and `total = input +
output`; when instead `total = input + output + thoughts` (thoughts > 0), thoughts are beside
the output and are added to it.

Prints {file: {"input", "cached", "output", "reasoning", "total", "calls"}} as JSON, in
agentlog's terms (fresh input without the cache reads, output with the reasoning).
"""

import json
import os
import sys


def add(out, inp, cached, output, thoughts, tool, total):
    inp, cached, output, thoughts, tool, total = (x or 0 for x in (inp, cached, output, thoughts, tool, total))
    if thoughts > 0 and total == inp + output + thoughts + tool:
        output += thoughts
    out["input"] += inp - cached + tool
    out["cached"] += cached
    out["output"] += output
    out["reasoning"] += thoughts
    out["total"] += total
    out["calls"] += 1


def account(path):
    out = {"input": 0, "cached": 0, "output": 0, "reasoning": 0, "total": 0, "calls": 0}
    subagent = os.path.basename(os.path.dirname(os.path.dirname(path))) == "subagents"
    telemetry = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if not isinstance(r, dict):
                continue
            ui = (r.get("systemPayload") or {}).get("uiEvent") if r.get("type") == "system" else None
            if r.get("subtype") == "ui_telemetry" and isinstance(ui, dict) \
                    and ui.get("event.name") == "qwen-code.api_response":
                telemetry.add(r.get("uuid"))
                add(out, ui.get("input_token_count"), ui.get("cached_content_token_count"),
                    ui.get("output_token_count"), ui.get("thoughts_token_count"), ui.get("tool_token_count"),
                    ui.get("total_token_count"))
            elif r.get("type") == "assistant" and isinstance(r.get("usageMetadata"), dict) and not subagent \
                    and r.get("parentUuid") not in telemetry:
                u = r["usageMetadata"]
                add(out, u.get("promptTokenCount"), u.get("cachedContentTokenCount"), u.get("candidatesTokenCount"),
                    u.get("thoughtsTokenCount"), u.get("toolUsePromptTokenCount"), u.get("totalTokenCount"))
    return out


if __name__ == "__main__":
    print(json.dumps({p: account(p) for p in sys.argv[1:]}, indent=1))
