#!/usr/bin/env python3
"""Hand sessions the real agents wrote over to another agent, and let that agent resume them.

    python3 tests/agents/handoff.py run --src DIR --out OUT [--pairs claude:codex,...] [--scenario tools,...]

For each pair SOURCE:TARGET and scenario, the source agent's session of ``DIR/<source>-<pinned>/<scenario>/``
(run there first with ``harness.py``'s scenario if it is missing) is handed over with
``agentlog handoff <id> <its files> --to <target> --cwd <project> --write`` into a fresh HOME of the
target agent, which then resumes it, at its pinned version, with a new prompt against the scripted
model server. Into ``OUT/<source>-to-<target>/<scenario>/`` go:

* ``home/``: the target's HOME, with the session file agentlog wrote and the agent appended to;
* ``handoff.json``: the handoff command, what it printed, and the target run's exit status;
* ``ledger.json`` and ``requests/``: what the target agent sent the model;
* for a pair of one agent (claude:claude, codex:codex), ``original/``: the same agent resuming the
  source's own file with the same prompt, its ledger and requests, to compare the two.

And ``OUT/claude-to-codex-register/tools/``: Claude Code's session handed over with ``--register`` to
a Codex that has a session of its own (``native/``), then continued with ``codex exec resume --last``;
``handoff.json`` holds the rows of Codex's thread index before and after the handoff.

``test_handoff.py`` checks what came out.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402
import server as model_server  # noqa: E402

# the pairs the handoff is checked with: every direction between Claude Code and Codex, one agent
# to itself, and from agents that keep their sessions elsewhere (Gemini CLI's JSON Lines, pi's
# session trees, OpenCode's SQLite store)
PAIRS = ["claude:codex", "codex:claude", "gemini:claude", "claude:claude", "codex:codex", "pi:claude",
         "opencode:codex"]
SCENARIOS = ["tools", "two-turns", "image", "reasoning"]


def cases() -> list[tuple[str, str]]:
    """Each pair with each scenario its source agent has."""
    return [(p, s) for p in PAIRS for s in SCENARIOS if s in harness.AGENTS[p.split(":")[0]].scenarios]
PROMPT = "[handoff] Continue where the other agent stopped: what did the commands print?"
ANSWER = "Continuing after the handoff: HANDOFF-OK."
TARGET_KIND = {"claude": "claude-code", "codex": "codex"}
# the version of the target agents: pinned, newest, or X.Y.Z (``--version``)
TARGET_VERSION = "pinned"


def target_exe(target: str) -> Path:
    """The target agent, installed at ``TARGET_VERSION``."""
    spec = harness.AGENTS[target]
    exe = harness.install(spec, harness.resolve_version(spec, TARGET_VERSION))
    harness.warm_up(target, exe)
    return exe


def source_dir(src: Path, agent: str, scenario: str) -> Path:
    """The source scenario's directory, run now if it is not there."""
    spec = harness.AGENTS[agent]
    d = src / f"{agent}-{spec.pinned}" / scenario
    if not (d / "ledger.json").exists():
        exe = harness.install(spec, spec.pinned)
        harness.warm_up(agent, exe)
        harness.run_scenario(agent, spec.pinned, exe, scenario, src)
    return d


def source_inputs(agent: str, scen_dir: Path) -> list[Path]:
    """What agentlog reads the source session from: the agent's session folders, or its store."""
    home = scen_dir / "home"
    if harness.AGENTS[agent].store:
        return [scen_dir / harness.AGENTS[agent].store]
    return [r for r in harness.ADAPTERS[agent].session_roots(home) if r.exists()]


def source_session(inputs: list[Path], marker: str) -> str:
    """The id of the session whose typed prompt holds ``marker``."""
    p = harness.agentlog("convert", *inputs, "--to", "unified", "--color", "never")
    for line in p.stdout.splitlines():
        e = json.loads(line)
        if (e["kind"] == "message" and e["payload"]["role"] == "user" and not e["injected"]
                and marker in e["payload"]["text"]):
            return e["session_id"]
    raise RuntimeError(f"no prompt with {marker} in {inputs}: {p.stderr[-500:]}")


def target_env(target: str, home: Path, exe: Path, base_url: str) -> dict:
    env = harness.ADAPTERS[target].env(home, exe, base_url)
    env["CODEX_HOME"] = str(home / ".codex")
    return env


def resume(target: str, exe: Path, home: Path, project: Path, session: str, out: Path) -> dict:
    """Resumes ``session`` with the target agent in ``project``, against a server whose ledger and
    requests go into ``out``; gives the run's exit status and output."""
    return resume_with(target, exe, home, project, session, out, "resume", PROMPT)


def resume_with(target: str, exe: Path, home: Path, project: Path, session: str | None, out: Path, mode: str,
                prompt: str) -> dict:
    """Runs the target agent once with ``prompt`` (``mode``: new, continue the last session, or
    resume ``session``), against a server whose ledger and requests go into ``out``."""
    adapter = harness.ADAPTERS[target]
    out.mkdir(parents=True, exist_ok=True)
    scen = harness.Scenario("handoff", {"main": [{"text": ANSWER}]}, [harness.Invocation(prompt, mode=mode)])
    srv = model_server.ModelServer(dict(scen.script, name="handoff"), str(out / "ledger.json"),
                                   idle_timeout=max(60.0, harness.AGENT_TIMEOUT), max_lifetime=harness.AGENT_TIMEOUT * 2,
                                   dump_dir=str(out / "requests"), run_id=f"handoff-{target}")
    srv.start()
    try:
        adapter.prepare(home, project, srv.base_url, scen)
        env = target_env(target, home, exe, srv.base_url)
        argv, stdin = adapter.argv(exe, scen.invocations[0], session, None)
        rc, stdout, stderr, secs = harness._run(argv, env, str(project), stdin, harness.AGENT_TIMEOUT)
    finally:
        srv.stop()
    return {"argv": [Path(argv[0]).name] + argv[1:], "exit": rc, "seconds": round(secs, 2),
            "stdout_tail": stdout[-3000:], "stderr_tail": stderr[-3000:]}


def run_pair(src: Path, out: Path, pair: str, scenario: str) -> dict:
    source, target = pair.split(":")
    scen_dir = source_dir(src, source, scenario)
    inputs = source_inputs(source, scen_dir)
    session = source_session(inputs, f"[{scenario}]")
    exe = target_exe(target)
    d = out / f"{source}-to-{target}" / scenario
    if d.exists():
        shutil.rmtree(d)
    home = d / "home"
    home.mkdir(parents=True)
    if source == target:
        # the same working directory as the original, so that the two resumes see the same context
        project = Path(harness.load_ledger(scen_dir)["meta"]["project"])
        project.mkdir(parents=True, exist_ok=True)
    else:
        project = Path(tempfile.mkdtemp(prefix=f"agentlog-handoff-{source}-{target}-"))
    record = {"source": source, "target": target, "scenario": scenario, "source_dir": str(scen_dir),
              "source_session": session, "project": str(project), "target_exe": str(exe)}
    try:
        # the target's own settings first (Codex's config.toml), as for any run of it
        harness.ADAPTERS[target].prepare(home, project, "http://127.0.0.1:9", harness.Scenario("handoff", {}, []))
        env = dict(os.environ, HOME=str(home), CODEX_HOME=str(home / ".codex"))
        env.pop("CLAUDE_CONFIG_DIR", None)
        argv = [str(harness.agentlog_bin()), "handoff", session, *map(str, inputs), "--to", TARGET_KIND[target],
                "--cwd", str(project), "--write", "--color", "never"]
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        record["handoff"] = {"argv": ["agentlog", *argv[1:]], "exit": p.returncode, "stdout": p.stdout,
                             "stderr": p.stderr[-3000:]}
        written = p.stdout.strip().split()[-1] if p.returncode == 0 and p.stdout.strip() else None
        record["written_session"] = written
        if written:
            record["resume"] = resume(target, exe, home, project, written, d)
        if source == target:
            record["original"] = resume_original(source, exe, scen_dir, d / "original", project)
    finally:
        shutil.rmtree(project, ignore_errors=True)
    (d / "handoff.json").write_text(json.dumps(record, indent=1))
    return record


def index_rows(home: Path) -> list[list]:
    """Every row of Codex's thread index, in id order (empty without an index)."""
    dbs = sorted(home.glob(".codex/state_*.sqlite"))
    if not dbs:
        return []
    with sqlite3.connect(f"file:{dbs[-1]}?mode=ro", uri=True) as db:
        return [list(r) for r in db.execute("SELECT * FROM threads ORDER BY id")]


def run_register(src: Path, out: Path, scenario: str = "tools") -> dict:
    """Claude Code's session handed over to a Codex that has sessions of its own, with
    ``--register``, then continued with ``codex exec resume --last``: the index decides which
    session is the last."""
    scen_dir = source_dir(src, "claude", scenario)
    inputs = source_inputs("claude", scen_dir)
    session = source_session(inputs, f"[{scenario}]")
    exe = target_exe("codex")
    d = out / "claude-to-codex-register" / scenario
    if d.exists():
        shutil.rmtree(d)
    home = d / "home"
    home.mkdir(parents=True)
    project = Path(tempfile.mkdtemp(prefix="agentlog-handoff-register-"))
    record = {"source": "claude", "target": "codex", "scenario": scenario, "source_dir": str(scen_dir),
              "source_session": session, "project": str(project)}
    try:
        # a session of Codex's own first, which makes the index
        record["native"] = resume_with("codex", exe, home, project, None, d / "native", "new",
                                       "[native] A session of Codex's own.")
        before = index_rows(home)
        env = dict(os.environ, HOME=str(home), CODEX_HOME=str(home / ".codex"))
        argv = [str(harness.agentlog_bin()), "handoff", session, *map(str, inputs), "--to", "codex",
                "--cwd", str(project), "--write", "--register", "--color", "never"]
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        record["handoff"] = {"argv": ["agentlog", *argv[1:]], "exit": p.returncode, "stdout": p.stdout,
                             "stderr": p.stderr[-3000:]}
        record["written_session"] = p.stdout.strip().split()[-1] if p.returncode == 0 else None
        record["index_before"], record["index_after"] = before, index_rows(home)
        record["resume"] = resume_with("codex", exe, home, project, None, d, "continue", PROMPT)
    finally:
        shutil.rmtree(project, ignore_errors=True)
    (d / "handoff.json").write_text(json.dumps(record, indent=1))
    return record


def resume_original(agent: str, exe: Path, scen_dir: Path, out: Path, project: Path) -> dict:
    """The agent resuming the source's own session file, with the same prompt, in the directory the
    session was made in (the agent looks its sessions up by it): a copy of its HOME."""
    ledger = harness.load_ledger(scen_dir)
    session = next(i["session_id"] for i in ledger["meta"]["invocations"] if i.get("session_id"))
    home = out / "home"
    shutil.copytree(scen_dir / "home", home, symlinks=True)
    # Codex's thread index holds the original rollout's absolute path: without it, Codex finds the
    # copy by scanning, and the original is left as it was
    for index in home.glob(".codex/state_*.sqlite*"):
        index.unlink()
    return resume(agent, exe, home, project, session, out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="hand the source sessions over and resume them in the target agents")
    r.add_argument("--src", required=True, help="a harness.py run directory (scenarios missing there are run)")
    r.add_argument("--out", required=True)
    r.add_argument("--pairs", default=",".join(PAIRS), help=f"SOURCE:TARGET,... (default {','.join(PAIRS)})")
    r.add_argument("--scenario", default=",".join(SCENARIOS))
    r.add_argument("--no-register", dest="register", action="store_false",
                   help="skip the run of --register (Claude Code to a Codex with sessions of its own, "
                        "continued with resume --last)")
    r.add_argument("--version", default="pinned",
                   help="the target agents' version: pinned (default), newest, or X.Y.Z (sources run pinned)")
    a = ap.parse_args(argv)
    global TARGET_VERSION
    TARGET_VERSION = a.version
    src, out = Path(a.src).resolve(), Path(a.out).resolve()
    rows = []
    if a.register:
        rec = run_register(src, out)
        rows.append(("claude:codex --register", "tools", rec["handoff"]["exit"], rec["resume"]["exit"], "-"))
    pairs = [p for p in a.pairs.split(",") if p]
    for pair in pairs:
        for scenario in a.scenario.split(","):
            if scenario not in harness.AGENTS[pair.split(":")[0]].scenarios:
                continue
            rec = run_pair(src, out, pair, scenario)
            rows.append((pair, scenario, rec.get("handoff", {}).get("exit"), (rec.get("resume") or {}).get("exit"),
                         (rec.get("original") or {}).get("exit", "-")))
    print("| pair | scenario | handoff exit | resume exit | original resume exit |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    return 0 if all(r[2] == 0 and r[3] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
