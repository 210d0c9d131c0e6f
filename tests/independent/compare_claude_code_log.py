"""Every prompt and assistant text that claude-code-log renders is in agentlog's transcripts.

usage: compare_claude_code_log.py AGENTLOG CORPUS_DIR

For each Claude Code session file under CORPUS_DIR (subagent files aside), renders it with
`claude-code-log convert FILE --format json` and with `AGENTLOG convert FILE SUBAGENTS…` to
Markdown and to HTML, collects the text items of claude-code-log's `user` and `assistant` nodes,
and checks that each is in both of agentlog's transcripts:

- Markdown keeps the model's Markdown, so each text, stripped, must occur as it is.
- HTML renders it, so each text is compared as its run of words (letters and digits, in order)
  against the words of the page's visible text, each link followed by its target.

Two kinds of text are shown differently by design and counted apart: the interrupt marker
("[Request interrupted by user…]"), which agentlog shows as a note, and the compaction summary
("This session is being continued from a previous conversation…", or any record marked
`isCompactSummary`), which is not a prompt.

Prints per-file counts and every text that is missing; exits non-zero when any is.
"""

import html.parser
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

BY_DESIGN = ("[Request interrupted by user", "This session is being continued from a previous conversation")


def texts(node, out):
    if node.get("type") in ("user", "assistant"):
        for item in (node.get("content") or {}).get("items") or []:
            if isinstance(item, dict) and item.get("type") == "text" and item.get("text", "").strip():
                out.append(item["text"].strip())
    for child in node.get("children") or []:
        texts(child, out)


def words(text):
    return " ".join(re.findall(r"[^\W_]+", text))


def markdown_words(text):
    """The words a reader sees of Markdown: a code fence's info string (```bash) is not shown."""
    return words(re.sub(r"^([ \t>]*)(`{3,}|~{3,})[^\n]*$", r"\1\2", text, flags=re.M))


def compaction_summaries(path):
    """Texts of the file's compaction summaries (`isCompactSummary`), which are not prompts."""
    found = set()
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("isCompactSummary"):
            content = (record.get("message") or {}).get("content")
            parts = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
            found.update(p.get("text", "").strip() for p in parts if isinstance(p, dict))
    return found


class Visible(html.parser.HTMLParser):
    """The visible text of a page (not its style sheet), each link followed by its target and
    each item of a numbered list preceded by its number, as a browser shows them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts, self.skip, self.links, self.lists = [], 0, [], []

    def handle_starttag(self, tag, attrs):
        if tag in ("style", "title"):
            self.skip += 1
        if tag == "a":
            self.links.append(dict(attrs).get("href") or "")
        if tag in ("ol", "ul"):
            self.lists.append(int(dict(attrs).get("start") or 1) if tag == "ol" else None)
        self.parts.append(" ")
        if tag == "li" and self.lists and self.lists[-1] is not None:
            self.parts.append(f"{self.lists[-1]} ")
            self.lists[-1] += 1

    def handle_endtag(self, tag):
        if tag in ("style", "title"):
            self.skip -= 1
        if tag in ("ol", "ul") and self.lists:
            self.lists.pop()
        if tag == "a" and self.links:
            self.parts.append(" " + self.links.pop() + " ")
        self.parts.append(" ")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def html_words(page):
    parser = Visible()
    parser.feed(page)
    return " " + words("".join(parser.parts)) + " "


def main():
    agentlog, corpus = sys.argv[1], Path(sys.argv[2])
    files = sorted(f for f in corpus.rglob("*.jsonl") if not f.name.startswith("agent-") and "subagents" not in f.parts)
    checked = missing = by_design = 0
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            out = Path(tmp) / "ccl.json"
            run = subprocess.run(["claude-code-log", "convert", str(f), "--format", "json", "-o", str(out), "--no-cache"],
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
            ours = {}
            for to in ("markdown", "html"):
                run = subprocess.run([agentlog, "convert", "-q", *inputs, "--to", to], capture_output=True, text=True)
                assert run.returncode in (0, 1), f"agentlog failed on {f}: {run.stderr[:200]}"
                ours[to] = run.stdout
            page = html_words(ours["html"])
            summaries = compaction_summaries(f)
            lost = []
            for t in theirs:
                if t.startswith(BY_DESIGN) or t in summaries:
                    by_design += 1
                    continue
                checked += 1
                if t not in ours["markdown"]:
                    lost.append(("markdown", t))
                if markdown_words(t) and f" {markdown_words(t)} " not in page:
                    lost.append(("html", t))
            missing += len(lost)
            print(f"{len(theirs) - len(lost)}/{len(theirs)} {f.relative_to(corpus)}")
            for to, t in lost:
                print(f"  missing from {to}: {t[:160]!r}")
    print(f"{checked} texts claude-code-log renders, {missing} missing from agentlog's Markdown or HTML; "
          f"{by_design} shown differently by design (interrupt notes, compaction summaries)")
    sys.exit(1 if missing or not checked else 0)


if __name__ == "__main__":
    main()
