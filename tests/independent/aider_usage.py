"""Independent Aider token accounting, per chat history file, for checking agentlog.

usage: aider_usage.py FILE...

Rule (aider/coders/base_coder.py `calculate_and_show_tokens_and_cost`, aider/io.py
`tool_output`): after each message Aider writes one notice

    > Tokens: <sent> sent[, <w> cache write][, <h> cache hit], <received> received. Cost: $<m> message, $<s> session.

where a figure under 1000 is exact, `N.Nk` is thousands to one decimal and `Nk` whole thousands
(aider/utils.py `format_tokens`); the cache parts appear only when not zero; with both of them the
`Cost:` part goes on the next line, without `> `; without prices there is no `Cost:` part. `sent`
holds the cache writes and hits, so fresh input is sent - write - hit.

Prints {file: {"input", "cache_read", "cache_write", "output", "total", "cost", "calls", "rounded"}}
as JSON: sums over the notices, in agentlog's terms; `rounded` counts notices with a `k` figure.
"""

import json
import re
import sys

NOTICE = re.compile(r"^> Tokens: (.*?) received\.(.*)$")
COST = re.compile(r"Cost: \$([0-9.]+) message, \$([0-9.]+) session\.")


def figure(text):
    text = text.strip()
    if text.endswith("k"):
        return round(float(text[:-1]) * 1000), True
    return int(text), False


def account(path):
    out = {"input": 0, "cache_read": 0, "cache_write": 0, "output": 0, "total": 0, "cost": 0.0, "calls": 0,
           "rounded": 0}
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    for i, line in enumerate(lines):
        m = NOTICE.match(line.rstrip())
        if not m:
            continue
        parts = {}
        rounded = False
        for item in (m.group(1) + " received").split(", "):
            number, label = item.split(" ", 1)
            parts[label], r = figure(number)
            rounded = rounded or r
        rest = m.group(2)
        if not rest.strip() and i + 1 < len(lines) and lines[i + 1].startswith("Cost: "):
            rest = lines[i + 1]
        cost = COST.search(rest)
        sent, hit, write = parts["sent"], parts.get("cache hit", 0), parts.get("cache write", 0)
        out["input"] += max(sent - hit - write, 0)
        out["cache_read"] += hit
        out["cache_write"] += write
        out["output"] += parts["received"]
        out["total"] += sent + parts["received"]
        out["cost"] = round(out["cost"] + (float(cost.group(1)) if cost else 0.0), 10)
        out["calls"] += 1
        out["rounded"] += rounded
    return out


def main():
    print(json.dumps({path: account(path) for path in sys.argv[1:]}, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
