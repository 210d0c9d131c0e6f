"""Reading is streamed: the first batch of a large session comes before the file is read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SIZE = 500 * 1000 * 1000


@pytest.fixture(scope="module")
def large_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One Claude Code session of about 500 MB: prompts and answers of 4 kB each (synthetic)."""
    path = tmp_path_factory.mktemp("large") / "5e55107e-0000-4000-8000-000000000500.jsonl"
    text = ("All work and no play makes a long session. " * 100)[:4000]
    with open(path, "w", encoding="utf-8") as f:
        n = 0
        while f.tell() < SIZE:
            n += 1
            user = n % 2 == 1
            record = {
                "type": "user" if user else "assistant",
                "sessionId": "5e55107e-0000-4000-8000-000000000500",
                "uuid": f"00000000-0000-4000-8000-{n:012d}",
                "parentUuid": f"00000000-0000-4000-8000-{n - 1:012d}" if n > 1 else None,
                "timestamp": f"2026-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
                "cwd": "/home/dev/large",
                "message": {"role": "user", "content": f"{n}: {text}"}
                if user
                else {
                    "id": f"msg_{n}",
                    "role": "assistant",
                    "model": "claude-opus-4-5",
                    "content": [{"type": "text", "text": f"{n}: {text}"}],
                    "usage": {"input_tokens": 10, "output_tokens": 1000},
                },
            }
            f.write(json.dumps(record) + "\n")
    return path


PROBE = """
import sys, time, agentlog

def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key + ":"))

def read_bytes():
    with open("/proc/self/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("rchar:"))

before = read_bytes()
reader = agentlog.read(sys.argv[1], jobs=2)
batch = reader.read_next_batch()
# Let the reading threads run as far ahead as they may.
time.sleep(2)
print(batch.num_rows, read_bytes() - before, status("VmHWM"))
"""


def test_the_first_batch_of_a_500_mb_session_does_not_read_the_whole_file(large_session: Path) -> None:
    size = large_session.stat().st_size
    assert size >= SIZE
    probe = subprocess.run([sys.executable, "-c", PROBE, str(large_session)], capture_output=True, text=True)
    assert probe.returncode == 0, probe.stderr
    rows, read, peak = map(int, probe.stdout.split())
    assert rows > 0
    # Read ahead is a few record batches (each up to 16 MiB of text) and chunks of lines, not
    # the file. Here a batch holds about 16 MB of the file, since each text is stored once, and
    # some ten batches' worth is read ahead (about 160 MB); memory stays bounded (below).
    assert read < size / 2, f"read {read} of {size} bytes before the consumer asked for more"
    assert peak < 400 * 1024 * 1024, f"peak memory {peak} bytes"
