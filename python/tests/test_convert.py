"""`agentlog.convert` does what the command does; problems are warnings, errors exceptions."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import agentlog
from conftest import run_cli


def test_convert_round_trips_through_unified_jsonl_and_parquet(shared_corpus: Path, tmp_path: Path) -> None:
    direct = agentlog.read(shared_corpus).read_all()
    report = agentlog.convert(shared_corpus, tmp_path / "all.jsonl")
    assert report["exit_code"] == 0
    assert report["totals"]["events"] == direct.num_rows
    assert sum(f["events"] for f in report["files"]) == direct.num_rows
    again = agentlog.read(tmp_path / "all.jsonl").read_all()
    assert again.equals(direct)
    agentlog.convert(shared_corpus, tmp_path / "all.parquet")
    assert pq.read_table(tmp_path / "all.parquet").column("id").to_pylist() == direct.column("id").to_pylist()


def test_convert_reports_skipped_lines_as_warnings_and_in_its_report(samples: Path, tmp_path: Path) -> None:
    with pytest.warns(agentlog.DiagnosticWarning) as caught:
        report = agentlog.convert(samples / "claude", tmp_path / "out.jsonl")
    assert report["exit_code"] == 1
    assert len(caught) == report["totals"]["warnings"] > 5
    truncated = [w.message for w in caught if w.message.code == "agentlog::input::truncated_line"]
    assert any(w.path.endswith("malformed-lines.jsonl") and w.line == 8 for w in truncated)
    # The command gives the same output and exit status.
    done = run_cli("convert", "-q", str(samples / "claude"), "-o", str(tmp_path / "cli.jsonl"))
    assert done.returncode == 1
    assert (tmp_path / "cli.jsonl").read_bytes() == (tmp_path / "out.jsonl").read_bytes()


def test_a_missing_input_raises_with_its_path(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-session.jsonl"
    for call in (agentlog.read, agentlog.sessions, agentlog.events, agentlog.groups):
        with pytest.raises(agentlog.InputError) as raised:
            call(missing)
        assert raised.value.path == str(missing)
        assert raised.value.code == "agentlog::input::not_found"
        assert str(missing) in str(raised.value)


def test_wrong_arguments_raise_usage_errors(samples: Path, tmp_path: Path) -> None:
    with pytest.raises(agentlog.UsageError, match="--since"):
        agentlog.read(samples, since="the day before never")
    with pytest.raises(agentlog.UsageError, match="nope"):
        agentlog.convert(samples, tmp_path / "out.jsonl", to="nope")
    assert isinstance(agentlog.UsageError("x"), ValueError)


def test_problems_made_errors_raise_with_file_line_and_column(samples: Path) -> None:
    broken = samples / "claude" / "malformed-lines.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("error", agentlog.DiagnosticWarning)
        with pytest.raises(agentlog.DiagnosticWarning) as raised:
            for _ in agentlog.events(broken):
                pass
        assert (raised.value.path, raised.value.line, raised.value.column) == (str(broken), 2, 63)
        assert raised.value.code == "agentlog::input::invalid_json"
        with pytest.raises(pa.ArrowInvalid, match=r"malformed-lines\.jsonl:2:63: invalid JSON"):
            agentlog.read(broken).read_all()


def test_an_unreadable_input_raises_after_the_others_are_converted(samples: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_text("these are my notes, not a session\n")
    good = samples / "codex" / "envelope-user-and-assistant-text.jsonl"
    out = tmp_path / "out.jsonl"
    with pytest.raises(agentlog.InputError) as raised:
        agentlog.convert([good, notes], out)
    assert raised.value.path == str(notes)
    assert raised.value.code == "agentlog::input::unknown_format"
    assert raised.value.report["exit_code"] == 3
    assert [f["status"] for f in raised.value.report["files"]] == ["ok"]
    assert out.stat().st_size > 0
    # Reading goes on past it with a warning.
    with pytest.warns(agentlog.InputWarning, match="notes.jsonl"):
        rows = agentlog.read([good, notes]).read_all().num_rows
    assert rows == agentlog.read(good).read_all().num_rows > 0


def test_an_output_that_cannot_be_written_raises(samples: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(agentlog.OutputError):
        agentlog.convert(samples / "codex" / "envelope-user-and-assistant-text.jsonl", blocker / "out.jsonl")


def test_the_package_installs_the_command(samples: Path) -> None:
    script = Path(sys.executable).parent / "agentlog"
    assert script.exists(), "the package installs an agentlog script beside the interpreter"
    done = subprocess.run([str(script), "--version"], capture_output=True)
    assert done.returncode == 0 and done.stdout.startswith(b"agentlog ")
    listed = subprocess.run([str(script), "ls", "--json", str(samples / "codex")], capture_output=True)
    assert listed.returncode == 0
    assert {json.loads(line)["agent"] for line in listed.stdout.splitlines()} == {"codex"}
    # A usage error exits 2 with clap's message on stderr, as the binary does.
    wrong = subprocess.run([str(script), "convert", "--to", "nope"], capture_output=True)
    assert wrong.returncode == 2 and b"nope" in wrong.stderr


def test_groups_are_units_that_read_apart_give_the_same_rows(shared_corpus: Path) -> None:
    units = agentlog.groups(shared_corpus)
    assert len(units) > 5 and any(len(u) > 1 for u in units)
    whole = agentlog.read(shared_corpus).read_all()
    parts = pa.concat_tables(agentlog.read(files).read_all() for files in units)
    assert parts.equals(whole)
