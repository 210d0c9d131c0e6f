"""``agentlog watch`` following the real agents live, as measured by ``watch.py``.

For Claude Code and Codex at their pinned versions, every scenario run with watch following the
agent's session store from before the agent starts: every event ``agentlog convert`` makes of the
store afterwards is on watch's output exactly once, as convert makes it, and nothing else is; watch stopped with SIGINT
between the turns of a session and started again with the same ``--state`` loses and repeats
nothing; the events come within a second of their lines (p95; the usage, held back until the
session has been quiet for 1.5 s, apart); and watch left alone with nothing changing uses less than
2 % of a core.

    python3 -m pytest tests/agents/test_watch.py                                # runs watch.py first
    AGENTLOG_WATCH_OUT=DIR python3 -m pytest tests/agents/test_watch.py         # checks a prepared run
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402
import watch  # noqa: E402

PREPARED = os.environ.get("AGENTLOG_WATCH_OUT")
CASES = [(a, s) for a in watch.AGENTS for s in harness.AGENTS[a].scenarios]
RESTARTS = [(a, k) for a in watch.AGENTS for k in ("restart", "restart-settled")]
KINDS = [(a, k) for a in watch.AGENTS for k in ("live", "restart", "restart-settled")]
IDLE = [(n, m) for n in [f"{a} store" for a in watch.AGENTS] + ["default places"] for m in ("default", "--poll")]
LATENCY_P95_MS = 1000
IDLE_CPU_PERCENT = 2.0


_skip = harness.skip_or_fail


@pytest.fixture(scope="session")
def results(tmp_path_factory) -> dict:
    if not harness.agentlog_bin().exists():
        _skip(f"agentlog binary not found at {harness.agentlog_bin()}")
    if PREPARED:
        out = Path(PREPARED)
    else:
        out = tmp_path_factory.mktemp("watch")
        p = subprocess.run([sys.executable, str(HERE / "watch.py"), "run", "--out", str(out)],
                           capture_output=True, text=True, timeout=1200)
        (out / "watch-output.txt").write_text(p.stdout + p.stderr)
        if not (out / "watch-results.json").exists():
            _skip("watch.py wrote no results (agents not installed?):\n" + (p.stdout + p.stderr)[-3000:])
    path = out / "watch-results.json"
    if not path.exists():
        _skip(f"no {path}")
    return json.loads(path.read_text())


def _run(results: dict, agent: str, scenario: str, kind: str = "live") -> dict:
    for r in results["runs"]:
        if (r["agent"], r["scenario"], r["kind"]) == (agent, scenario, kind):
            if r.get("unsupported"):
                pytest.skip(f"{agent} {scenario}: {r['agent_status']}")
            return r
    _skip(f"{agent} {scenario} ({kind}) was not run")


def _where(r: dict) -> str:
    return f"(see {r['dir']}: watch-*.jsonl against convert.jsonl)"


@pytest.mark.parametrize("agent,scenario", CASES, ids=[f"{a}-{s}" for a, s in CASES])
def test_every_event_is_written(results, agent, scenario):
    r = _run(results, agent, scenario)
    assert not r["missing"], f"{len(r['missing'])} of {r['events']} events never written: {r['missing_detail']} {_where(r)}"


@pytest.mark.parametrize("agent,scenario", CASES, ids=[f"{a}-{s}" for a, s in CASES])
def test_no_event_is_written_twice(results, agent, scenario):
    r = _run(results, agent, scenario)
    assert not r["duplicates"], f"written more than once (id: times): {r['duplicates']} {_where(r)}"


@pytest.mark.parametrize("agent,scenario", CASES, ids=[f"{a}-{s}" for a, s in CASES])
def test_no_event_that_convert_does_not_make(results, agent, scenario):
    """An event read from a session whose next lines were not written yet, which the finished
    session does not have (Codex: an answer from its ``item_completed`` line, then again from its
    ``response_item``; a ``usage_snapshot`` of a ``token_usage_record`` before its ``token_count``)."""
    r = _run(results, agent, scenario)
    assert not r["extra"], f"{len(r['extra'])} events not in agentlog convert's output: {r['extra']} {_where(r)}"


@pytest.mark.parametrize("agent,scenario", CASES, ids=[f"{a}-{s}" for a, s in CASES])
def test_events_are_those_convert_makes(results, agent, scenario):
    """An event watch gave is the event of that id convert makes of the finished session, but for
    its ``seq`` (see the report: a usage event watch gives takes the seq of the end of the file as
    it was then). Codex: a typed prompt read before its ``item_completed`` line is ``injected``."""
    r = _run(results, agent, scenario)
    if "differing_detail" not in r:
        pytest.skip("a run of an older watch.py")
    bad = [d for d in r["differing_detail"] if d["fields"] != ["seq"]]
    assert not bad, f"events other than convert makes them: {bad} {_where(r)}"


@pytest.mark.parametrize("agent,kind", RESTARTS, ids=[f"{a}-{k}" for a, k in RESTARTS])
def test_a_restart_loses_and_repeats_nothing(results, agent, kind):
    r = _run(results, agent, watch.RESTART_SCENARIO, kind)
    x = r["restart"]
    assert x["turn1_seen_before_stop"], f"the first turn's events did not all come before the restart: {x}"
    assert not r["missing"], f"missing after the restart: {r['missing_detail']} {_where(r)}"
    assert not r["duplicates"], f"written twice across the restart: {r['duplicates']} {_where(r)}"
    assert x["lossless"]


@pytest.mark.parametrize("agent,kind", KINDS, ids=[f"{a}-{k}" for a, k in KINDS])
def test_events_come_within_a_second(results, agent, kind):
    s = results["agents"].get(f"{agent} {kind}")
    if not s or not s["latency_ms"]["n"]:
        _skip(f"no {kind} run of {agent}")
    slow = [(r["scenario"], r["latency_ms"]["p95"], r["slowest"][:3]) for r in results["runs"]
            if r["agent"] == agent and r["kind"] == kind and not r.get("unsupported")
            and (r["latency_ms"]["p95"] or 0) >= LATENCY_P95_MS]
    assert s["latency_ms"]["p95"] < LATENCY_P95_MS, (
        f"{agent} ({kind}): p95 {s['latency_ms']['p95']} ms over {s['latency_ms']['n']} events; slow runs "
        f"(scenario, p95, [ms, file, line, kind]): {slow}")


@pytest.mark.parametrize("name,mode", IDLE, ids=[f"{n.replace(' ', '-')}{'-poll' if m != 'default' else ''}"
                                                  for n, m in IDLE])
def test_idle_cpu(results, name, mode):
    row = next((i for i in results["idle"] if i["name"] == name and i["mode"] == mode), None)
    if row is None:
        _skip(f"idle {name} ({mode}) was not measured")
    assert row["alive"], f"watch ended on its own: {row}"
    assert row["cpu_percent"] < IDLE_CPU_PERCENT, (
        f"{row['cpu_seconds']} CPU s in {row['seconds']} s over {row['files']} files: {row['cpu_percent']} % of a core")
    assert row["events_while_idle"] == 0, f"{row['events_while_idle']} events written while no file changed"


def test_watch_stops_on_a_signal(results):
    """SIGTERM (and SIGINT before a restart) ends watch within a few seconds: with status 0 (it
    stops at the end of its round) or 128 + the signal."""
    stops = [(r["agent"], r["scenario"], r["kind"], w["signal"], w["exit"], w["stop_seconds"])
             for r in results["runs"] if not r.get("unsupported") for w in r["watches"]]
    stops += [(i["name"], i["mode"], "idle", "SIGTERM", i["exit"], i["stop_seconds"]) for i in results["idle"]]
    if not stops:
        _skip("no watch was run")
    bad = [s for s in stops if s[4] not in (0, 130, 143)]
    assert not bad, f"watch did not end cleanly (agent, scenario, run, signal, exit, seconds): {bad}"
