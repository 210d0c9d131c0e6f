#!/usr/bin/env python3
"""Token usage of Factory Droid session files, computed from the format alone (Python standard
library; written from the files Droid writes, not from agentlog's code).

A session `<dir>/<id>.jsonl` has its totals in `<dir>/<id>.settings.json`: `tokenUsage` with
`inputTokens` (input beyond the cache), `cacheReadTokens`, `cacheCreationTokens` and
`outputTokens`, summed over every response of the session. Droid 0.225 writes no usage into the
JSONL file; where an assistant `message` carries an Anthropic `usage` of its own, those counts
are part of the session's totals, and without a settings file they are all there is.

Usage: droid_usage.py FILE.jsonl... -> JSON {file: {input, cache_read, cache_write, output, total}}
"""

import json
import os
import sys


def from_messages(path):
    sums = {"input": 0, "cache_read": 0, "cache_write": 0, "output": 0}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue
            message = record.get("message") if isinstance(record, dict) else None
            if record.get("type") != "message" or not isinstance(message, dict):
                continue
            usage = message.get("usage")
            if message.get("role") != "assistant" or not isinstance(usage, dict):
                continue
            sums["input"] += usage.get("input_tokens") or 0
            sums["cache_read"] += usage.get("cache_read_input_tokens") or 0
            sums["cache_write"] += usage.get("cache_creation_input_tokens") or 0
            sums["output"] += usage.get("output_tokens") or 0
    return sums


def from_settings(path):
    stem = os.path.basename(path).split(".")[0]
    settings = os.path.join(os.path.dirname(path), stem + ".settings.json")
    try:
        with open(settings, encoding="utf-8") as f:
            totals = json.load(f).get("tokenUsage")
    except (OSError, ValueError):
        return None
    if not isinstance(totals, dict):
        return None
    return {"input": totals.get("inputTokens", 0), "cache_read": totals.get("cacheReadTokens", 0),
            "cache_write": totals.get("cacheCreationTokens", 0), "output": totals.get("outputTokens", 0)}


def main(paths):
    out = {}
    for path in paths:
        usage = from_settings(path) or from_messages(path)
        usage["total"] = sum(usage.values())
        out[path] = usage
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
