#!/usr/bin/env python3
"""Measure ``agentlog watch`` following the real agents while they write their sessions.

    python3 tests/agents/watch.py run --out OUT [--agent claude,codex] [--scenario all|tools,two-turns,...]
                                      [--idle-seconds 30] [--jobs 2] [--no-idle] [--no-restart] [--poll]
    python3 tests/agents/watch.py table OUT

For each agent (Claude Code and Codex, at their pinned versions) and scenario, ``harness.py``'s
``run_scenario`` runs the agent against the scripted model server in a fresh HOME, and this script
hooks into it (through a wrapper of the agent's adapter, see ``_Watched``): once the HOME is
prepared and before the agent starts, it creates the agent's session store (Claude Code:
``$HOME/.claude/projects``; Codex: ``$CODEX_HOME/sessions`` and ``archived_sessions``) and starts

* ``agentlog watch <store dirs> --state <scenario>/watch.state`` (with ``--poll``: ``watch --poll``,
  else watch's default, file-system notifications where the binary has them) with its standard
  output read by a thread that notes when each line came (``time.monotonic``);
* a thread that looks at the store every ~5 ms and notes when each complete line of each file
  (file, line number) first appeared.

When the agent is done, it waits until watch has written nothing for 3 s, stops it (SIGTERM;
SIGINT in the restart runs) and converts the store with ``agentlog convert --to unified``. Every
event of the conversion must be on watch's output exactly once (by ``id``), and nothing else (an
event watch gave from a session read between two lines of one record, which the finished session
does not have, is "not in convert"); the latency of an event is the time from the appearance of the
last line it is made of (``source.line`` and the lines of ``extra.merged_lines``) to its line on
watch's output, to within the clock's ~5 ms (a watch woken by a notification may come a few ms
before the clock saw the line: a small negative latency); the usage events, which watch holds back
until the session has been quiet for 1.5 s, are counted apart.

The restart runs (``two-turns`` again, into ``OUT/restart/`` and ``OUT/restart-settled/``): before
the second prompt, watch is stopped with SIGINT as soon as every event of the first turn but the
usage is on its output (``restart``: a usage may be held back then), or once the first turn's usage
is out too and watch has been quiet for 1 s (``restart-settled``); then started again with the same
``--state``. The union of both outputs must hold every event exactly once.

Idle CPU (``OUT/idle/``): with no agent running, watch following the stores of the ``tools`` runs,
and watch with no INPUT (the agents' default places) in a HOME holding a few hundred session files
(``corpus/`` and ``../shared/corpus`` copied into ``.claude/projects`` and ``.codex/sessions``),
for ``--idle-seconds``, all side by side, each with notifications and with ``--poll``: the CPU time
from ``/proc/<pid>/stat`` (utime + stime) as a share of one core, counted once its first round is
written (``--state`` saved, then 2 s without output), and the events written meanwhile (none).

Into OUT go ``watch-results.json`` (what ``test_watch.py`` checks) and, per run,
``<kind>/<agent>-<version>/<scenario>/``: ``home/`` and ``ledger.json`` (as ``harness.py`` writes
them), ``watch.state``, ``watch-<n>.jsonl`` and ``watch-<n>.stderr`` (each watch process's output),
``convert.jsonl``, ``lines.json`` (when each line appeared) and ``result.json``. The Markdown tables
are printed at the end (and again by ``table``).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402

AGENTS = ["claude", "codex"]
RESTART_SCENARIO = "two-turns"
WATCH_ARGS: list[str] = []  # more arguments of the watches that follow the agents (run --poll: ["--poll"])
QUIET = 3.0            # seconds without output after which a watch is taken to be done
QUIET_MAX = 30.0       # ... but no longer than this after the agent ended
POLL = 0.005           # how often the line clock looks at the files
SETTLE = 1.5           # watch's hold-back of a response's usage (pipeline::follow::SETTLE)
CLK_TCK = os.sysconf("SC_CLK_TCK")


def agentlog_env() -> dict:
    return dict(os.environ)


# ---------------------------------------------------------------------------
# when lines appear, and when watch writes events


class LineClock:
    """Looks at every file under ``roots`` every ``POLL`` seconds and notes when each complete line
    (ended by a newline) first appeared, by (real path, 1-based line number)."""

    def __init__(self, roots: list[Path]):
        self.roots = roots
        self.appeared: dict[tuple[str, int], float] = {}
        self._files: dict[str, list] = {}  # path -> [inode, offset of the first byte not in a complete line, lines]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="line-clock")

    def start(self) -> "LineClock":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self._look()  # a last look: nothing is left out

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._look()
            self._stop.wait(POLL)

    def _look(self) -> None:
        for root in self.roots:
            for dirpath, _, names in os.walk(root):
                for n in names:
                    self._read(os.path.realpath(os.path.join(dirpath, n)))

    def _read(self, path: str) -> None:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return
        seen = self._files.get(path)
        if seen and (seen[0] != st.st_ino or st.st_size < seen[1]):
            seen = None  # replaced or truncated: from the start again (does not happen with these agents)
        if seen is None:
            seen = self._files[path] = [st.st_ino, 0, 0]
        if st.st_size <= seen[1]:
            return
        now = time.monotonic()
        with open(path, "rb") as f:
            f.seek(seen[1])
            data = f.read()
        end = data.rfind(b"\n")
        if end < 0:
            return
        for _ in range(data.count(b"\n", 0, end + 1)):
            seen[2] += 1
            self.appeared.setdefault((path, seen[2]), now)
        seen[1] += end + 1


class Watch:
    """One ``agentlog watch`` process; a thread reads its output and notes when each line came."""

    def __init__(self, args: list, out: Path, env: dict | None = None):
        self.out = out
        self.argv = [str(harness.agentlog_bin()), "watch", *map(str, args), "--color", "never"]
        self.lines: list[tuple[float, dict]] = []  # (monotonic time, event)
        self.bad_lines: list[str] = []
        self.started = time.monotonic()
        self.last = self.started  # when the last line came
        self.exit = None
        self.stop_seconds = None
        self.signal = None
        self._err = open(out.with_suffix(".stderr"), "wb")
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=self._err, stdin=subprocess.DEVNULL,
                                     env=env if env is not None else agentlog_env(), start_new_session=True)
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, daemon=True, name="watch-stdout")
        self._thread.start()

    def _read(self) -> None:
        with open(self.out, "wb") as raw:
            for line in self.proc.stdout:
                now = time.monotonic()
                raw.write(line)
                try:
                    ev = json.loads(line)
                except ValueError:
                    self.bad_lines.append(line.decode(errors="replace")[:300])
                    continue
                with self._lock:
                    self.lines.append((now, ev))
                    self.last = now

    def ids(self) -> set:
        with self._lock:
            return {ev["id"] for _, ev in self.lines}

    def wait_quiet(self, quiet: float, since: float, limit: float) -> bool:
        """Waits until nothing came for ``quiet`` seconds and ``quiet`` seconds have passed since
        ``since``; at most until ``limit`` (monotonic). Whether it went quiet."""
        while True:
            now = time.monotonic()
            with self._lock:
                last = max(self.last, since)
            if now - last >= quiet:
                return True
            if now >= limit:
                return False
            time.sleep(0.05)

    def cpu_seconds(self) -> float | None:
        return cpu_seconds(self.proc.pid)

    def stop(self, sig=signal.SIGTERM, timeout: float = 5.0) -> None:
        """Sends ``sig`` and waits for the process to end (SIGKILL after ``timeout`` seconds)."""
        self.signal = sig.name
        t0 = time.monotonic()
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            self.exit = self.proc.wait(timeout)
            self.stop_seconds = round(time.monotonic() - t0, 3)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            self.exit = "killed: did not stop within %.0f s of %s" % (timeout, sig.name)
        self._thread.join(5)
        self._err.close()

    def record(self) -> dict:
        return {"argv": ["agentlog", *self.argv[1:]], "started": round(self.started, 6), "lines": len(self.lines),
                "bad_lines": self.bad_lines,
                "signal": self.signal, "exit": self.exit, "stop_seconds": self.stop_seconds,
                "stderr": self.out.with_suffix(".stderr").read_text(errors="replace")[-2000:]}


def peak_rss_mb(pid: int) -> float | None:
    """The peak resident set size of a process (VmHWM), in MB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process (all its threads), in seconds."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


# ---------------------------------------------------------------------------
# hooking into harness.run_scenario


_current = threading.local()


class _Watched:
    """An agent's adapter with two hooks for the run of the current thread (if any): ``prepare``
    (the HOME is ready, the agent not started) starts watch and the line clock, and ``argv`` (an
    agent process is about to start) lets a restart run stop and restart watch between turns."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def prepare(self, home, project, base_url, scen):
        self._inner.prepare(home, project, base_url, scen)
        run = getattr(_current, "run", None)
        if run:
            run.start(home, self._inner.session_roots(home))

    def argv(self, exe, inv, first_session, image):
        run = getattr(_current, "run", None)
        if run:
            run.before_invocation(inv)
        return self._inner.argv(exe, inv, first_session, image)


def install_hooks(agents: list[str]) -> None:
    for ag in agents:
        if not isinstance(harness.ADAPTERS[ag], _Watched):
            harness.ADAPTERS[ag] = _Watched(harness.ADAPTERS[ag])


class WatchedRun:
    """One scenario run with watch following the agent's store."""

    def __init__(self, agent: str, scenario: str, restart: str | None = None):
        self.agent, self.scenario, self.restart = agent, scenario, restart
        self.watches: list[Watch] = []
        self.clock: LineClock | None = None
        self.invocations = 0
        self.restart_info: dict = {}
        self.dir: Path | None = None
        self.roots: list[Path] = []

    def start(self, home: Path, roots: list[Path]) -> None:
        self.dir = home.parent
        self.roots = [Path(os.path.realpath(r)) for r in roots]
        for r in self.roots:
            r.mkdir(parents=True, exist_ok=True)
        self.clock = LineClock(self.roots).start()
        self._watch()
        time.sleep(0.2)  # its first round over the empty store

    def _watch(self) -> None:
        n = len(self.watches) + 1
        self.watches.append(Watch([*self.roots, "--state", self.dir / "watch.state", *WATCH_ARGS],
                                  self.dir / f"watch-{n}.jsonl"))

    def before_invocation(self, inv) -> None:
        self.invocations += 1
        if self.restart and self.invocations == 2:
            self._restart()

    def _restart(self) -> None:
        """Between the first and the second turn: stop watch with SIGINT once the first turn is on
        its output (but the usage, with ``restart``; all of it and 1 s of quiet with
        ``restart-settled``), then start it again with the same state."""
        turn1 = convert(self.roots)
        want = {e["id"] for e in turn1 if self.restart == "restart-settled" or not is_usage(e)}
        w = self.watches[-1]
        limit = time.monotonic() + 15
        while not want <= w.ids() and time.monotonic() < limit:
            time.sleep(0.002)
        seen_all = want <= w.ids()
        if self.restart == "restart-settled":
            w.wait_quiet(1.0, time.monotonic(), time.monotonic() + 10)
        before = w.ids()
        w.stop(signal.SIGINT)
        held = [e["id"] for e in turn1 if e["id"] not in before]
        self.restart_info = {"variant": self.restart, "turn1_events": len(turn1), "turn1_seen_before_stop": seen_all,
                             "turn1_not_out_at_stop": len(held),
                             "turn1_usage_not_out_at_stop": sum(1 for e in turn1 if e["id"] in held and is_usage(e)),
                             "first_exit": w.exit}
        self._watch()

    def finish(self, status: str) -> dict:
        """After the agent: waits for watch to go quiet, stops it, compares with convert."""
        ended = time.monotonic()
        w = self.watches[-1]
        quiet = w.wait_quiet(QUIET, ended, ended + QUIET_MAX)
        cpu = w.cpu_seconds()
        w.stop(signal.SIGTERM)
        self.clock.stop()
        expected = convert(self.roots, self.dir / "convert.jsonl")
        r = compare(expected, self.watches, self.clock)
        r.update({"agent": self.agent, "scenario": self.scenario, "kind": self.restart or "live",
                  "agent_status": status, "went_quiet": quiet, "watch_cpu_seconds": cpu,
                  "watches": [x.record() for x in self.watches], "dir": str(self.dir)})
        if self.restart:
            r["restart"] = dict(self.restart_info, lossless=not r["missing"] and not r["duplicates"])
        (self.dir / "lines.json").write_text(json.dumps(
            [{"file": f, "line": n, "t": round(t, 6)} for (f, n), t in sorted(self.clock.appeared.items())]))
        (self.dir / "result.json").write_text(json.dumps(r, indent=1))
        return r

    def abort(self) -> None:
        for w in self.watches:
            if w.proc.poll() is None:
                w.proc.kill()
        if self.clock:
            self.clock._stop.set()


def is_usage(e: dict) -> bool:
    return e.get("kind") == "meta" and (e.get("payload") or {}).get("meta_type") == "usage"


def convert(roots: list[Path], out: Path | None = None) -> list[dict]:
    p = harness.agentlog("convert", *[r for r in roots if r.exists()], "--to", "unified", "--color", "never")
    if out:
        out.write_text(p.stdout)
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def percentile(xs: list[float], q: float) -> float | None:
    """The q-th percentile (nearest rank) of ``xs``."""
    if not xs:
        return None
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(-(-q * len(s) // 100)) - 1))]


def stats(xs: list[float]) -> dict:
    return {"n": len(xs), "p50": rnd(percentile(xs, 50)), "p95": rnd(percentile(xs, 95)),
            "max": rnd(max(xs) if xs else None)}


def rnd(x):
    return None if x is None else round(x, 1)


def compare(expected: list[dict], watches: list[Watch], clock: LineClock) -> dict:
    """Every event of ``expected`` on the watches' output exactly once; the latencies."""
    out = [(t, ev) for w in watches for t, ev in w.lines]
    counts = collections.Counter(ev["id"] for _, ev in out)
    want = {e["id"]: e for e in expected}
    missing = [i for i in want if i not in counts]
    duplicates = {i: c for i, c in counts.items() if c > 1}
    extra = [i for i in counts if i not in want]
    first = {}
    for t, ev in out:
        first.setdefault(ev["id"], (t, ev))
    # the same id with other content: watch gave an event before its lines were all there
    differing = [i for i, (_, ev) in first.items() if i in want and ev != want[i]]
    def fields(i):
        return sorted(k for k in set(first[i][1]) | set(want[i]) if first[i][1].get(k) != want[i].get(k))
    differing_fields = collections.Counter(k for i in differing for k in fields(i))
    differing_detail = [{"id": i, "kind": want[i]["kind"], "line": want[i]["source"]["line"],
                         "record_type": want[i]["source"]["record_type"], "fields": fields(i),
                         "watch": {k: first[i][1].get(k) for k in fields(i) if k != "extra"},
                         "convert": {k: want[i].get(k) for k in fields(i) if k != "extra"}} for i in differing]
    lat, lat_src, usage_lat, unmatched = [], [], [], 0
    slow = []
    for i, (t, ev) in first.items():
        f = os.path.realpath(ev["source"]["file"])
        lines = [ev["source"]["line"]] + [m["line"] for m in ((ev.get("extra") or {}).get("merged_lines") or [])
                                          if isinstance(m, dict) and "line" in m]
        times = [clock.appeared.get((f, n)) for n in lines]
        if times[0] is None or None in times:
            unmatched += 1
            continue
        ms = (t - max(times)) * 1000
        if is_usage(ev):
            usage_lat.append(ms)
        else:
            lat.append(ms)
            lat_src.append((t - times[0]) * 1000)
            slow.append((ms, ev["source"]["file"].rsplit("/", 1)[-1], ev["source"]["line"], ev["kind"]))
    slow.sort(reverse=True)
    return {"events": len(want), "written": len(out), "missing": missing, "duplicates": duplicates,
            "extra": extra, "differing": differing[:20], "differing_count": len(differing),
            "differing_fields": dict(differing_fields), "differing_detail": differing_detail[:20],
            "missing_detail": [{"id": i, "kind": want[i]["kind"], "line": want[i]["source"]["line"],
                                "usage": is_usage(want[i])} for i in missing[:20]],
            "latency_ms": stats(lat), "latency_from_source_line_ms": stats(lat_src), "usage_latency_ms": stats(usage_lat),
            "latencies_ms": [round(x, 1) for x in lat], "usage_latencies_ms": [round(x, 1) for x in usage_lat],
            "slowest": [list(s) for s in slow[:5]], "unmatched_lines": unmatched}


def run_one(agent: str, version: str, exe: Path, scenario: str, out: Path, restart: str | None = None) -> dict:
    run = WatchedRun(agent, scenario, restart)
    _current.run = run
    try:
        row = harness.run_scenario(agent, version, exe, scenario, out)
        if run.dir is None:  # unsupported: the agent never started
            return {"agent": agent, "scenario": scenario, "kind": restart or "live", "agent_status": row["status"],
                    "unsupported": True}
        return run.finish(row["status"])
    except BaseException:
        run.abort()
        raise
    finally:
        _current.run = None


# ---------------------------------------------------------------------------
# idle CPU


def corpus_home(home: Path, target_files: int = 300) -> int:
    """A HOME with Claude Code and Codex session files copied from ``corpus/`` and
    ``../shared/corpus`` (as often as it takes for about ``target_files`` files); their number."""
    sources = {"claude": [harness.REPO / "corpus" / "claude", harness.REPO / "corpus" / "recorded" / "claude",
                          harness.REPO.parent / "shared" / "corpus" / "claude"],
               "codex": [harness.REPO / "corpus" / "codex", harness.REPO / "corpus" / "recorded" / "codex",
                         harness.REPO.parent / "shared" / "corpus" / "codex"]}
    # (not corpus/claude/home's history.jsonl: a config root's side file, not a session)
    files = {ag: [(src, f) for src in dirs if src.is_dir() for f in sorted(src.rglob("*.jsonl"))
                  if f.name != "history.jsonl"]
             for ag, dirs in sources.items()}
    per_copy = sum(len(v) for v in files.values())
    copies = max(1, -(-target_files // max(1, per_copy)))
    n = 0
    for k in range(copies):
        for src, f in files["claude"]:
            rel = f.relative_to(src)
            project = f"-copy{k}-{src.parent.name}-{src.name}-{rel.parts[0] if len(rel.parts) > 1 else 'top'}"
            dest = home / ".claude" / "projects" / project / Path(*rel.parts[1:] or rel.parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dest)
            n += 1
        for j, (src, f) in enumerate(files["codex"]):
            name = f.name if f.name.startswith("rollout-") else f"rollout-2026-01-01T00-00-00-{j:08d}-{f.stem}.jsonl"
            dest = home / ".codex" / "sessions" / "2026" / "01" / f"{k + 1:02d}" / f"{j:03d}-{name}"
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dest)
            n += 1
    return n


def watch_supports(flag: str) -> bool:
    """Whether ``agentlog watch --help`` lists ``flag`` (``--poll`` came with the notifications)."""
    p = harness.agentlog("watch", "--help")
    return flag in p.stdout


def binary_info() -> dict:
    """Which agentlog ran: the binary is rebuilt while it is worked on."""
    b = harness.agentlog_bin()
    st = b.stat()
    return {"path": str(b), "version": harness.agentlog("--version").stdout.strip(), "size": st.st_size,
            "modified": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(st.st_mtime)),
            "notifications": watch_supports("--poll")}


def measure_idle(out: Path, stores: dict, seconds: float) -> list[dict]:
    """watch over each store of ``stores`` (name -> dirs) and over the default places of a HOME
    full of session files, all side by side, with notifications and (where the binary has
    ``--poll``) polling: CPU over ``seconds`` once the first round is out."""
    out.mkdir(parents=True, exist_ok=True)
    home = out / "home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir()
    files = corpus_home(home)
    # nothing of this process's environment that names other places
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}
    modes = [("default", [])] + ([("--poll", ["--poll"])] if watch_supports("--poll") else [])
    cases = []  # (name, mode, watch arguments, environment, session files)
    for mode, extra in modes:
        tag = "" if not extra else "-poll"
        for name, dirs in stores.items():
            cases.append((name, mode, [*dirs, "--state", out / f"{name.replace(' ', '-')}{tag}.state", *extra], None,
                          sum(1 for d in dirs for _ in d.rglob("*.jsonl"))))
        cases.append(("default places", mode, ["--state", out / f"default-places{tag}.state", *extra], env, files))
    watches = []
    for name, mode, args, e, n in cases:
        state = Path(args[args.index("--state") + 1])
        state.unlink(missing_ok=True)
        watches.append(Watch(args, state.with_suffix(".jsonl"), env=e))
    rows = []
    try:
        # the first round writes everything there is, then saves the state: wait for the state,
        # then for 2 s of quiet (a usage held back comes 1.5 s after its files last changed)
        limit = time.monotonic() + 120
        waiting = {id(w): (Path(c[2][c[2].index("--state") + 1]), w) for c, w in zip(cases, watches)}
        while waiting and time.monotonic() < limit:
            for key, (state, w) in list(waiting.items()):
                if state.exists() or w.proc.poll() is not None:
                    w.first_round = time.monotonic() - w.started
                    del waiting[key]
            time.sleep(0.01)
        for w in watches:
            w.wait_quiet(2.0, time.monotonic(), limit)
        t0 = time.monotonic()
        c0 = [(w.cpu_seconds(), len(w.lines)) for w in watches]
        time.sleep(seconds)
        wall = time.monotonic() - t0
        for (name, mode, _, _, n), w, (cpu0, lines0) in zip(cases, watches, c0):
            cpu1 = w.cpu_seconds()
            used = None if cpu1 is None or cpu0 is None else cpu1 - cpu0
            rows.append({"name": name, "mode": mode, "files": n, "startup_events": lines0,
                         "first_round_seconds": round(getattr(w, "first_round", float("nan")), 2),
                         "peak_rss_mb": peak_rss_mb(w.proc.pid), "seconds": round(wall, 2),
                         "cpu_seconds": None if used is None else round(used, 3),
                         "cpu_percent": None if used is None else round(used / wall * 100, 3),
                         "events_while_idle": len(w.lines) - lines0, "alive": w.proc.poll() is None})
    finally:
        for w in watches:
            w.stop(signal.SIGTERM)
    for row, w in zip(rows, watches):
        row.update(argv=["agentlog", *w.argv[1:]], exit=w.exit, stop_seconds=w.stop_seconds,
                   stderr_tail=w.out.with_suffix(".stderr").read_text(errors="replace")[-500:])
    return rows


# ---------------------------------------------------------------------------
# the run


def cmd_run(a) -> int:
    out = Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if not harness.agentlog_bin().exists():
        print(f"agentlog binary not found: {harness.agentlog_bin()}", file=sys.stderr)
        return 2
    binary = binary_info()
    if a.poll:
        if not binary["notifications"]:
            print("this agentlog watch has no --poll (it always polls)", file=sys.stderr)
        else:
            WATCH_ARGS.append("--poll")
    agents = a.agent.split(",")
    install_hooks(agents)
    t_start = time.monotonic()
    jobs = []  # per agent: its runs one after another
    versions = {}
    for ag in agents:
        spec = harness.AGENTS[ag]
        version = versions[ag] = harness.resolve_version(spec, "pinned")
        exe = harness.install(spec, version)
        harness.warm_up(ag, exe)
        names = list(spec.scenarios) if a.scenario == "all" else [s for s in a.scenario.split(",") if s and s != "none"]
        job = [(ag, version, exe, n, out / "live", None) for n in names]
        if a.restart:
            job += [(ag, version, exe, RESTART_SCENARIO, out / kind, kind) for kind in ("restart", "restart-settled")]
        jobs.append(job)

    def run_job(job):
        return [run_one(ag, v, exe, n, o, r) for ag, v, exe, n, o, r in job]

    runs = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for f in [pool.submit(run_job, j) for j in jobs]:
            runs += f.result()
    idle = []
    if a.idle:
        stores = {}
        for ag in agents:
            d = out / "live" / f"{ag}-{versions[ag]}" / "tools" / "home"
            if d.exists():
                stores[f"{ag} store"] = [Path(os.path.realpath(r)) for r in harness.ADAPTERS[ag].session_roots(d)
                                         if r.exists()]
        idle = measure_idle(out / "idle", stores, a.idle_seconds)
    mode = "--poll" if WATCH_ARGS else ("notifications" if binary["notifications"] else "polling")
    results = {"agentlog": binary, "versions": versions, "watch_args": WATCH_ARGS, "mode": mode,
               "interval_ms": 500, "seconds": round(time.monotonic() - t_start, 1), "runs": runs,
               "agents": summarize(runs, agents), "idle": idle}
    (out / "watch-results.json").write_text(json.dumps(results, indent=1))
    print_tables(results)
    ok = all(r.get("unsupported") or (not r["missing"] and not r["duplicates"]) for r in runs)
    return 0 if ok else 1


def summarize(runs: list[dict], agents: list[str]) -> dict:
    """Per agent and kind of run (live, restart, restart-settled): the latencies of all their events."""
    out = {}
    for ag in agents:
        for kind in dict.fromkeys(r["kind"] for r in runs):
            rs = [r for r in runs if r["agent"] == ag and r["kind"] == kind and not r.get("unsupported")]
            if not rs:
                continue
            out[f"{ag} {kind}"] = {
                "agent": ag, "kind": kind, "runs": len(rs), "events": sum(r["events"] for r in rs),
                "missing": sum(len(r["missing"]) for r in rs), "duplicates": sum(len(r["duplicates"]) for r in rs),
                "extra": sum(len(r["extra"]) for r in rs),
                "latency_ms": stats([x for r in rs for x in r["latencies_ms"]]),
                "usage_latency_ms": stats([x for r in rs for x in r["usage_latencies_ms"]])}
    return out


def fmt(s: dict) -> str:
    return "-" if not s or not s.get("n") else f"{s['p50']} / {s['p95']} / {s['max']}"


def print_tables(results: dict) -> None:
    b = results["agentlog"]
    print(f"\nagentlog watch ({b['version']}, built {b['modified']}; {results['mode']}, interval 500 ms) following "
          f"the agents live; {results['seconds']} s in all\n")
    print("| agent | scenario | run | events | missing | duplicates | not in convert | same id, other content "
          "| latency ms p50 / p95 / max | usage latency ms p50 / p95 / max | watch exits (signal: status) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results["runs"]:
        if r.get("unsupported"):
            print(f"| {r['agent']} | {r['scenario']} | {r['kind']} | {r['agent_status']} | | | | | | | |")
            continue
        exits = ", ".join(f"{w['signal']}: {w['exit']}" for w in r["watches"])
        print(f"| {r['agent']} | {r['scenario']} | {r['kind']} | {r['events']} | {len(r['missing'])} "
              f"| {len(r['duplicates'])} | {len(r['extra'])} | {r['differing_count']} | {fmt(r['latency_ms'])} "
              f"| {fmt(r['usage_latency_ms'])} | {exits} |")
    print("\n| agent | runs | events | missing | duplicates | not in convert | latency ms p50 / p95 / max "
          "| usage latency ms p50 / p95 / max |")
    print("|---|---|---|---|---|---|---|---|")
    for name, s in results["agents"].items():
        print(f"| {name} | {s['runs']} | {s['events']} | {s['missing']} | {s['duplicates']} | {s['extra']} "
              f"| {fmt(s['latency_ms'])} | {fmt(s['usage_latency_ms'])} |")
    restarts = [r for r in results["runs"] if r.get("restart")]
    if restarts:
        print("\n| agent | restart | turn-1 events | not out at SIGINT (usage) | first exit | events "
              "| missing | duplicates | lossless | latency ms p50 / p95 / max |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in restarts:
            x = r["restart"]
            print(f"| {r['agent']} | {x['variant']} | {x['turn1_events']} | {x['turn1_not_out_at_stop']} "
                  f"({x['turn1_usage_not_out_at_stop']}) | {x['first_exit']} | {r['events']} | {len(r['missing'])} "
                  f"| {len(r['duplicates'])} | {x['lossless']} | {fmt(r['latency_ms'])} |")
    if results["idle"]:
        print("\n| idle watch | mode | session files | events of its first round | first round s | peak RSS MB "
              "| CPU s over wall s | % of a core | events while idle |")
        print("|---|---|---|---|---|---|---|---|---|")
        for i in results["idle"]:
            print(f"| {i['name']} | {i['mode']} | {i['files']} | {i['startup_events']} | {i['first_round_seconds']} "
                  f"| {i['peak_rss_mb']} | {i['cpu_seconds']} / {i['seconds']} | {i['cpu_percent']} "
                  f"| {i['events_while_idle']} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run the agents with agentlog watch following them; write OUT/watch-results.json")
    r.add_argument("--out", required=True)
    r.add_argument("--agent", default=",".join(AGENTS), help=f"comma-separated (default {','.join(AGENTS)})")
    r.add_argument("--scenario", default="all", help="all (each agent's own), a comma-separated list, or none (with the restart runs "
                   "and the idle measurement only)")
    r.add_argument("--jobs", type=int, default=2, help="agents run side by side (default 2: one per agent)")
    r.add_argument("--idle-seconds", type=float, default=30.0)
    r.add_argument("--no-idle", dest="idle", action="store_false", help="skip the idle CPU measurement")
    r.add_argument("--no-restart", dest="restart", action="store_false", help="skip the restart runs")
    r.add_argument("--poll", action="store_true",
                   help="the watches that follow the agents poll (watch --poll) instead of taking notifications")
    t = sub.add_parser("table", help="print the tables of a run")
    t.add_argument("out")
    a = ap.parse_args(argv)
    if a.cmd == "table":
        print_tables(json.loads((Path(a.out) / "watch-results.json").read_text()))
        return 0
    return cmd_run(a)


if __name__ == "__main__":
    sys.exit(main())
