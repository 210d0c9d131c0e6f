"""Independent OpenHands token accounting, per conversation, for checking agentlog.

usage: openhands_usage.py BASE_STATE_JSON...

Rule (OpenHands software-agent-sdk, openhands/sdk/llm/utils/metrics.py and telemetry.py): a
conversation's `base_state.json` holds `stats.usage_to_metrics`, one `Metrics` per LLM of the
conversation, whose `token_usages` list has one entry per model response, as litellm reported
it: `prompt_tokens` (cache reads and writes included), `completion_tokens` (reasoning included),
`cache_read_tokens`, `cache_write_tokens`, `reasoning_tokens`. Every entry counts once.

Prints {file: {"input", "cached", "cache_write", "output", "reasoning", "total", "calls",
"cost"}} as JSON, in agentlog's terms (fresh input without the cache reads and writes); `cost` is
the sum of the LLMs' `accumulated_cost`.
"""

import json
import sys


def account(path):
    with open(path, encoding="utf-8") as f:
        state = json.load(f)
    out = {"input": 0, "cached": 0, "cache_write": 0, "output": 0, "reasoning": 0, "total": 0, "calls": 0,
           "cost": 0.0}
    for metrics in ((state.get("stats") or {}).get("usage_to_metrics") or {}).values():
        out["cost"] += metrics.get("accumulated_cost") or 0.0
        for u in metrics.get("token_usages") or []:
            read = u.get("cache_read_tokens", 0)
            write = u.get("cache_write_tokens", 0)
            fresh = max(u.get("prompt_tokens", 0) - read - write, 0)
            out["input"] += fresh
            out["cached"] += read
            out["cache_write"] += write
            out["output"] += u.get("completion_tokens", 0)
            out["reasoning"] += u.get("reasoning_tokens", 0)
            out["total"] += fresh + read + write + u.get("completion_tokens", 0)
            out["calls"] += 1
    return out


def main(paths):
    json.dump({p: account(p) for p in paths}, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main(sys.argv[1:])
