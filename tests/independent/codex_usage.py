"""Independent Codex token accounting, per rollout file, for checking agentlog.

usage: codex_usage.py FILE...

Rule (reference/codex-format.md §7): `token_count.info.total_token_usage` is cumulative. One
model call is counted per row whose counters advanced, as the difference to the previous row;
a row whose counters did not change is a re-emit and counts nothing; a row where a counter went
down is a reset and counts that row's `last_token_usage`; a counted difference with no input
and no output (the estimate written after compaction) counts nothing; `info: null` rows count
nothing. In a forked thread, the rows replayed from the parent (from the second session_meta,
within 2 s of it) count nothing. A row with a counter that is not a whole number from 0 to
2^63 - 1 counts nothing and is not the previous row of the next one. A byte-order mark at the
start of the file is not part of the first line.

Prints {file: {"input", "cached", "output", "reasoning", "total", "calls"}} as JSON, in Codex's
terms (cached is part of input).
"""

import json
import sys
from datetime import datetime


def ts(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


COUNTERS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")


def valid(n):
    return n is None or (type(n) is int and 0 <= n <= 2**63 - 1)


def account(path):
    out = {"input": 0, "cached": 0, "output": 0, "reasoning": 0, "total": 0, "calls": 0}
    prev = None
    metas, forked, replay_from = 0, False, None
    for line in open(path, encoding="utf-8-sig", errors="replace"):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if not isinstance(r, dict) or "payload" not in r:
            continue
        p, when = r["payload"], ts(r.get("timestamp"))
        if replay_from is not None and when is not None and (when - replay_from).total_seconds() * 1000 > 2000:
            replay_from = None
        if r.get("type") == "session_meta":
            metas += 1
            if metas == 1:
                forked = bool(p.get("forked_from_id"))
            elif forked and replay_from is None:
                replay_from = when
            continue
        if r.get("type") != "event_msg" or p.get("type") != "token_count" or not p.get("info"):
            continue
        t = p["info"].get("total_token_usage")
        if not t:
            continue
        if not all(valid(t.get(k)) for k in COUNTERS):
            continue
        last = p["info"].get("last_token_usage")
        if last and not all(valid(last.get(k)) for k in COUNTERS):
            p["info"]["last_token_usage"] = None
        get = lambda u, k: (u or {}).get(k) or 0
        tot = lambda u: u.get("total_tokens") if u.get("total_tokens") is not None else get(u, "input_tokens") + get(u, "output_tokens")
        last_prev, prev = prev, t
        if replay_from is not None:
            continue
        if last_prev is None:
            call = t
        elif get(t, "input_tokens") < get(last_prev, "input_tokens") or get(t, "output_tokens") < get(last_prev, "output_tokens") or tot(t) < tot(last_prev):
            call = p["info"].get("last_token_usage")
        elif tot(t) > tot(last_prev):
            call = {k: get(t, k) - get(last_prev, k) for k in ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")}
            call["total_tokens"] = tot(t) - tot(last_prev)
        else:
            call = None
        if not call or (get(call, "input_tokens") == 0 and get(call, "output_tokens") == 0):
            continue
        out["input"] += get(call, "input_tokens")
        out["cached"] += min(get(call, "cached_input_tokens"), get(call, "input_tokens"))
        out["output"] += get(call, "output_tokens")
        out["reasoning"] += get(call, "reasoning_output_tokens")
        out["total"] += tot(call)
        out["calls"] += 1
    return out


if __name__ == "__main__":
    json.dump({path: account(path) for path in sys.argv[1:]}, sys.stdout, indent=1, sort_keys=True)
