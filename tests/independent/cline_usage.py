"""Independent Cline CLI token accounting, per session file, for checking agentlog.

usage: cline_usage.py FILE...

Rule (Cline CLI 3.0 `~/.cline/data/sessions/<id>/<id>.messages.json`, as the real 3.0.65
wrote it against a server whose served usage is known): the file is one JSON document whose
`messages` are the conversation. Each assistant message with a `metrics` object is one model
request. `metrics.inputTokens` is the whole prompt, cache reads and cache writes included
(Anthropic served input 1000, cache read 300, cache write 200: inputTokens 1500), so fresh
input is `inputTokens - cacheReadTokens - cacheWriteTokens`; output is `outputTokens`;
`cost` is the agent's own USD figure. A count the metrics lack counts as 0 here.

The VS Code extension's task folders (`tasks/<id>/`) split a task over two arrays: usage is
counted from `ui_messages.json` only, one request per `say: api_req_started` record, whose
`text` is JSON `{tokensIn, tokensOut, cacheReads, cacheWrites, cost}` with `tokensIn` the fresh
input (Anthropic's `input_tokens`; gmfstu/Online-Card-Architecture @2e6753c4 has 47 of them,
as many as the assistant messages of its history); `usageMissing` counts as no tokens. The
`metrics.tokens` of `api_conversation_history.json` (cache reads and writes lumped together as
`cached`) count nothing.

Prints {file: {"input", "cached", "cache_write", "output", "total", "cost", "calls"}} as JSON,
in agentlog's terms (fresh input without the cache counts).
"""

import json
import sys


def account(path):
    out = {"input": 0, "cached": 0, "cache_write": 0, "output": 0, "total": 0, "cost": 0.0, "calls": 0}
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if path.endswith("ui_messages.json"):
        for r in doc:
            if not (isinstance(r, dict) and r.get("type") == "say" and r.get("say") == "api_req_started"):
                continue
            try:
                req = json.loads(r.get("text") or "{}")
            except ValueError:
                req = {}
            if req.get("usageMissing"):
                req = {"cost": req.get("cost")}
            counts = [req.get(k) or 0 for k in ("tokensIn", "cacheReads", "cacheWrites", "tokensOut")]
            out["input"] += counts[0]
            out["cached"] += counts[1]
            out["cache_write"] += counts[2]
            out["output"] += counts[3]
            out["total"] += sum(counts)
            out["cost"] += req.get("cost") or 0.0
            out["calls"] += 1
        return out
    if isinstance(doc, list):
        return out
    for m in doc.get("messages") or []:
        if not isinstance(m, dict) or m.get("role") != "assistant":
            continue
        metrics = m.get("metrics")
        if not isinstance(metrics, dict):
            continue
        prompt = metrics.get("inputTokens") or 0
        read = metrics.get("cacheReadTokens") or 0
        write = metrics.get("cacheWriteTokens") or 0
        fresh = prompt - read - write if prompt >= read + write else prompt
        output = metrics.get("outputTokens") or 0
        out["input"] += fresh
        out["cached"] += read
        out["cache_write"] += write
        out["output"] += output
        out["total"] += fresh + read + write + output
        out["cost"] += metrics.get("cost") or 0.0
        out["calls"] += 1
    return out


if __name__ == "__main__":
    print(json.dumps({p: account(p) for p in sys.argv[1:]}, indent=1))
