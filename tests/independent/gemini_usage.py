"""Independent Gemini CLI token accounting, per session file, for checking agentlog.

usage: gemini_usage.py FILE...

Rule (reference/other-agents.md; gemini-cli's chatRecordingService.ts): a session is a JSON
document `{…, messages: [...]}` (before 0.39) or JSON Lines (0.39 on) where a record with the
`id` of an earlier one replaces it, `{"$set": {"messages": [...]}}` replaces them all, and
`{"$rewindTo": id}` drops that message and the later ones. Every model response that happened
counts once, in its last version: the messages in force at the end, and those that a rewind or
a rewrite dropped. A `gemini` message's `tokens` count as: fresh input `input - cached + tool`,
cache reads `cached`, output `output + thoughts`, reasoning `thoughts`, total `total`.

Prints {file: {"input", "cached", "output", "reasoning", "total", "calls"}} as JSON, in
agentlog's terms (fresh input without the cache reads).
"""

import json
import sys


def messages(path):
    text = open(path, encoding="utf-8").read()
    if text.lstrip().startswith("{") and text.lstrip().splitlines()[0].strip() == "{":
        return json.loads(text).get("messages", [])
    live, gone = {}, []
    for line in text.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if not isinstance(r, dict):
            continue
        if "$rewindTo" in r:
            ids = list(live)
            cut = ids.index(r["$rewindTo"]) if r["$rewindTo"] in live else 0
            for i in ids[cut:]:
                gone.append(live.pop(i))
        elif isinstance(r.get("$set"), dict):
            new = r["$set"].get("messages")
            if isinstance(new, list):
                keep = {m.get("id") for m in new if isinstance(m, dict)}
                for i in [i for i in live if i not in keep]:
                    gone.append(live.pop(i))
                for m in new:
                    if isinstance(m, dict):
                        live[m.get("id")] = m
        elif "id" in r and "type" in r:
            live[r["id"]] = r
        elif isinstance(r.get("messages"), list):
            for m in r["messages"]:
                if isinstance(m, dict):
                    live[m.get("id")] = m
    return gone + list(live.values())


def account(path):
    out = {"input": 0, "cached": 0, "output": 0, "reasoning": 0, "total": 0, "calls": 0}
    for m in messages(path):
        t = m.get("tokens") if m.get("type") == "gemini" else None
        if not isinstance(t, dict):
            continue
        n = lambda k: t.get(k) or 0  # noqa: E731
        out["input"] += max(n("input") - n("cached"), 0) + n("tool")
        out["cached"] += n("cached")
        out["output"] += n("output") + n("thoughts")
        out["reasoning"] += n("thoughts")
        out["total"] += n("total")
        out["calls"] += 1
    return out


print(json.dumps({path: account(path) for path in sys.argv[1:]}, indent=1, sort_keys=True))
