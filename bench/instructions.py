"""Instructions per event through the live runner, counted by valgrind (callgrind): the measure a refactor of the
write path must keep (issue 44: within 3 %). Counting instructions, not time, makes the figure the same on a busy
machine. Run as `.venv/bin/python -m bench instructions` (needs valgrind: Debian's `valgrind`).

The workload is bench/_instructions_run.py: two warm-up runs, then N runs of three events; the figure is the
difference between N = RUNS and N = 0 (start-up, imports and warm-up cancel), divided by the 3 * RUNS events. The
floor, counted the same way: `json.loads` of the COMPLETE event's text.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from bench import report

RUNS = 40
EVENTS_PER_RUN = 3
ROOT = Path(__file__).resolve().parent.parent


def instructions(runs: int, *mode: str) -> int:
    """Instructions the workload process executed (callgrind's `Collected`)."""
    answer = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            "-m",
            "bench._instructions_run",
            str(runs),
            *mode,
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": "0"},  # the same set orders in every run: the same count
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected\s*:\s*(\d+)", answer.stderr)
    if found is None:
        raise RuntimeError(f"valgrind said no instruction count: {answer.stderr[-2000:]}")
    return int(found.group(1))


def per_event() -> tuple[float, float]:
    """Instructions per event of the runner, and of the floor (`json.loads` of the COMPLETE event's text)."""
    events = RUNS * EVENTS_PER_RUN
    runner = (instructions(RUNS) - instructions(0)) / events
    floor = (instructions(events, "floor") - instructions(0, "floor")) / events
    return runner, floor


def main() -> None:
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind): skipped")
        return
    runner, floor = per_event()
    report.record(
        __name__,
        f"instructions per event, live runner (SQLite, {RUNS} Databricks runs of 3 events)",
        runner,
        "instructions",
        floor,
        "json.loads of the COMPLETE event",
    )
