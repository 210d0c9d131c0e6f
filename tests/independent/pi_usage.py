"""Independent pi token accounting, per session file, for checking agentlog.

usage: pi_usage.py FILE...

Rule (pi's docs/session-format.md and message-types; tests/agents/FINDINGS-pi.md): a session
file is JSON Lines, a `session` header and then entries. Each model response is an entry
`{"type": "message", "message": {"role": "assistant", "usage": {...}, "responseId": ...}}`; an
error pi gave up on is written with every count 0 and no `responseId`, and is no response. pi 1.x
also writes `usage` on `compaction` and `branch_summary` entries (the summarisation requests) and
`usage` entries (requests that are no message), each counted once. Every entry counts, whichever
branch of the tree it is on. A fork (a header with `parentSession`) starts with copies of its
parent's entries, with the same `id`s: those are counted in the parent, not here. When the parent
file is gone (looked for at the path named and beside the fork), the copies are the entries
written before the fork's header time.

`usage {input, output, cacheRead, cacheWrite, totalTokens, reasoning?}`: input is already fresh
input; output includes reasoning.

Prints {file: {"input", "cached", "cache_write", "output", "reasoning", "total", "calls"}} as
JSON.
"""

import json
import os
import sys


def records(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict):
                out.append(r)
    return out


def copied_test(path, header):
    parent = header.get("parentSession") if header else None
    if not isinstance(parent, str):
        return lambda r: False
    for candidate in (parent, os.path.join(os.path.dirname(path), os.path.basename(parent))):
        if os.path.isfile(candidate):
            ids = {r.get("id") for r in records(candidate) if r.get("type") != "session"}
            return lambda r: r.get("id") in ids
    since = header.get("timestamp") or ""
    # ISO 8601 times in UTC with milliseconds compare as text
    return lambda r: isinstance(r.get("timestamp"), str) and r["timestamp"] < since


def responses(rs):
    for r in rs:
        kind = r.get("type")
        if kind == "message":
            m = r.get("message")
            if not isinstance(m, dict) or m.get("role") != "assistant" or not isinstance(m.get("usage"), dict):
                continue
            u = m["usage"]
            counts = [u.get(k) for k in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")]
            if m.get("responseId") or any(isinstance(c, int) and c > 0 for c in counts):
                yield r, u
        elif kind in ("compaction", "branch_summary", "usage") and isinstance(r.get("usage"), dict):
            yield r, r["usage"]


def account(path):
    rs = records(path)
    header = next((r for r in rs if r.get("type") == "session"), None)
    copied = copied_test(path, header)
    out = {"input": 0, "cached": 0, "cache_write": 0, "output": 0, "reasoning": 0, "total": 0, "calls": 0}
    for r, u in responses(rs):
        if copied(r):
            continue
        n = lambda k: u.get(k) if isinstance(u.get(k), int) else 0
        out["input"] += n("input")
        out["cached"] += n("cacheRead")
        out["cache_write"] += n("cacheWrite")
        out["output"] += n("output")
        out["reasoning"] += n("reasoning")
        out["total"] += n("totalTokens")
        out["calls"] += 1
    return out


if __name__ == "__main__":
    print(json.dumps({p: account(p) for p in sys.argv[1:]}, indent=1))
