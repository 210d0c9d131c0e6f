"""Independent GitHub Copilot CLI token accounting, per session file, for checking agentlog.

usage: copilot_usage.py FILE...

Rule (reference/other-agents.md): each `assistant.message` reports its `outputTokens`; each
`session.shutdown` reports, per model, the totals of the run since `session.start` or
`session.resume` (`modelMetrics[model].usage`). Per run and model: output is the larger of the
shutdown's `outputTokens` and the sum of that model's messages' `outputTokens`; input, cache
reads, cache writes and reasoning come from the shutdown (`inputTokens` includes the cache
reads and writes, so fresh input is what is left). A run without a shutdown has only its
messages' output. Calls: one per message with `outputTokens`, plus one per model whose shutdown
totals add anything to its messages'.

Prints {file: {"input", "cached", "cache_write", "output", "reasoning", "calls"}} as JSON.
"""

import json
import sys


def account(path):
    out = {"input": 0, "cached": 0, "cache_write": 0, "output": 0, "reasoning": 0, "calls": 0}
    run = {}  # model -> output of its messages in this run
    model = None
    for line in open(path, encoding="utf-8", errors="replace"):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if not isinstance(r, dict):
            continue
        t, d = r.get("type"), r.get("data") or {}
        if t in ("session.start", "session.resume"):
            run = {}
            model = d.get("selectedModel", model)
        elif t == "session.model_change":
            model = d.get("newModel", model)
        elif t == "assistant.message":
            model = d.get("model", model)
            if isinstance(d.get("outputTokens"), int):
                out["output"] += d["outputTokens"]
                out["calls"] += 1
                run[model or ""] = run.get(model or "", 0) + d["outputTokens"]
        elif t == "session.shutdown":
            for name, m in (d.get("modelMetrics") or {}).items():
                u = m.get("usage") or {}
                n = lambda k: u.get(k) or 0  # noqa: E731
                fresh = max(n("inputTokens") - n("cacheReadTokens") - n("cacheWriteTokens"), 0)
                extra_output = max(n("outputTokens") - run.get(name, 0), 0)
                if fresh + n("cacheReadTokens") + n("cacheWriteTokens") + extra_output + n("reasoningTokens"):
                    out["calls"] += 1
                out["input"] += fresh
                out["cached"] += n("cacheReadTokens")
                out["cache_write"] += n("cacheWriteTokens")
                out["output"] += extra_output
                out["reasoning"] += n("reasoningTokens")
            run = {}
    return out


print(json.dumps({path: account(path) for path in sys.argv[1:]}, indent=1, sort_keys=True))
