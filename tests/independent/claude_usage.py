"""Independent Claude Code usage totals, per session, for checking agentlog.

usage: claude_usage.py DIR

Rule (reference/claude-format.md §8.1): assistant lines sharing (message.id, requestId) are one
response; its usage is the line with the largest output_tokens (the last one on ties), never
a sum. A subagent's reply recorded in a `progress` record (`data.type` `agent_progress`,
reply in `data.message.message`, request in `data.message.requestId`) is a line of its
response like any other. Lines whose model is <synthetic> or that are API error messages count nothing. Files are
read in name order, depth first (directories in place, as `walkdir` sorts them); a response
already counted in an earlier file, or all of whose lines repeat record uuids of earlier files
(a resumed session's copies), counts nothing again. Totals go to the sessionId of the line
holding the usage.

Prints {session_id: {"input", "cache_write", "cache_read", "output", "responses"}} as JSON.
"""

import json
import os
import sys


def files_in_walk_order(root):
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if os.path.isdir(path):
            yield from files_in_walk_order(path)
        elif name.endswith(".jsonl"):
            yield path


def main():
    seen_uuids, counted = set(), set()
    totals = {}
    for path in files_in_walk_order(sys.argv[1]):
        stem = os.path.basename(path).split(".")[0]
        groups, order, file_uuids = {}, [], []
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(r, dict):
                    continue
                copied = r.get("uuid") in seen_uuids
                if r.get("uuid"):
                    file_uuids.append(r["uuid"])
                m, request = r.get("message"), r.get("requestId")
                # A subagent's reply seen in a progress record (agent_progress): the reply is
                # data.message.message, its request data.message.requestId.
                data = r.get("data")
                if r.get("type") == "progress" and isinstance(data, dict) and data.get("type") == "agent_progress":
                    outer = data.get("message")
                    if isinstance(outer, dict) and outer.get("type") == "assistant":
                        m, request = outer.get("message"), outer.get("requestId")
                elif r.get("type") != "assistant":
                    continue
                if not isinstance(m, dict):
                    continue
                u = m.get("usage")
                if not m.get("id") or not isinstance(u, dict):
                    continue
                if m.get("model") == "<synthetic>" or r.get("isApiErrorMessage"):
                    continue
                key = (m["id"], request or "")
                out = u.get("output_tokens") or 0
                if key not in groups:
                    groups[key] = {"best": None, "out": -1, "all_copied": True}
                    order.append(key)
                g = groups[key]
                g["all_copied"] = g["all_copied"] and copied
                if out >= g["out"]:
                    g["best"], g["out"] = (r, u), out
        for key in order:
            g = groups[key]
            first_time = key not in counted
            counted.add(key)
            if g["all_copied"] or not first_time:
                continue
            r, u = g["best"]
            t = totals.setdefault(r.get("sessionId") or stem,
                                  {"input": 0, "cache_write": 0, "cache_read": 0, "output": 0, "responses": 0})
            t["input"] += u.get("input_tokens") or 0
            t["cache_write"] += u.get("cache_creation_input_tokens") or 0
            t["cache_read"] += u.get("cache_read_input_tokens") or 0
            t["output"] += u.get("output_tokens") or 0
            t["responses"] += 1
        seen_uuids.update(file_uuids)
    json.dump(totals, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
