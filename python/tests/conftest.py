"""Shared fixtures: the corpora, and the `agentlog` command to compare the package with."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "corpus"
# $AGENTLOG_SHARED names the shared material's folder (default: `shared` beside the project);
# `off` puts it out of reach, as on a clone alone.
SHARED_ROOT = os.environ.get("AGENTLOG_SHARED", str(ROOT.parent / "shared"))
SHARED = Path(SHARED_ROOT) / "corpus"


@pytest.fixture(scope="session")
def shared_corpus() -> Path:
    """The real logs beside the project; when missing a failure under CI=true, else a skip
    (always a skip with AGENTLOG_SHARED=off)."""
    if SHARED_ROOT == "off":
        pytest.skip("AGENTLOG_SHARED=off: the shared corpus is out of reach")
    if not SHARED.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"the shared corpus is missing: {SHARED}")
        pytest.skip(f"no shared corpus at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def samples() -> Path:
    """The project's own small samples, some broken on purpose."""
    return SAMPLES


def command() -> List[str]:
    """The `agentlog` command: $AGENTLOG_BIN (a binary built by cargo), else the one the
    package installs, else the package's module."""
    if os.environ.get("AGENTLOG_BIN"):
        return [os.environ["AGENTLOG_BIN"]]
    script = shutil.which("agentlog", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "agentlog"]


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Runs the command; its exit status is the caller's to check."""
    return subprocess.run([*command(), *args], capture_output=True, env=env)
