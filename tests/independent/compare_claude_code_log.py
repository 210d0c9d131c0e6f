"""Every prompt and assistant text that claude-code-log renders is in agentlog's transcript.

usage: compare_claude_code_log.py AGENTLOG CORPUS_DIR

For each Claude Code session file under CORPUS_DIR (subagent files aside), renders it with
`claude-code-log convert FILE --format json` and with `AGENTLOG convert FILE SUBAGENTS…
--to markdown`,
collects the text items of claude-code-log's `user` and `assistant` nodes, and checks that each,
stripped, occurs in agentlog's Markdown. Prints per-file counts and every text that is missing;
exits non-zero when any is.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path


def texts(node, out):
    if node.get("type") in ("user", "assistant"):
        for item in (node.get("content") or {}).get("items") or []:
            if isinstance(item, dict) and item.get("type") == "text" and item.get("text", "").strip():
                out.append(item["text"].strip())
    for child in node.get("children") or []:
        texts(child, out)


def main():
    agentlog, corpus = sys.argv[1], Path(sys.argv[2])
    files = sorted(f for f in corpus.rglob("*.jsonl") if not f.name.startswith("agent-") and "subagents" not in f.parts)
    checked = missing = 0
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            out = Path(tmp) / "ccl.json"
            run = subprocess.run(["claude-code-log", "convert", str(f), "--format", "json", "-o", str(out)],
                                 capture_output=True, text=True)
            if run.returncode != 0 or not out.exists():
                print(f"claude-code-log failed on {f}: {run.stderr.strip()[:200]}")
                continue
            theirs = []
            for m in json.loads(out.read_text(encoding="utf-8")).get("messages", []):
                texts(m, theirs)
            # claude-code-log shows the session's subagents too: their files, in the session's
            # folder (`<id>/subagents/`) or, in older layouts, beside it (`agent-*.jsonl`).
            inputs = [str(f)] + [str(a) for a in sorted(f.parent.glob("agent-*.jsonl"))]
            if (f.parent / f.stem / "subagents").is_dir():
                inputs.append(str(f.parent / f.stem / "subagents"))
            ours = subprocess.run([agentlog, "convert", "-q", *inputs, "--to", "markdown"],
                                  capture_output=True, text=True).stdout
            lost = [t for t in theirs if t not in ours]
            checked += len(theirs)
            missing += len(lost)
            print(f"{len(theirs) - len(lost)}/{len(theirs)} {f.relative_to(corpus)}")
            for t in lost:
                print(f"  missing: {t[:160]!r}")
    print(f"{checked - missing} of {checked} texts claude-code-log renders are in agentlog's transcripts")
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
