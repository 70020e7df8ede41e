"""The chaos test (tests/e2e/test_chaos.py) on a larger corpus: serve --no-worker, three workers, every event sent
once or twice in a shuffled order by 8 threads, two workers killed with SIGKILL and replaced, the catalog compared
with in-order processing — on the Table store (Azurite) and on SQLite.

It runs the test itself in a subprocess (bench imports nothing from tests/) with CHAOS_SCALE=N (env
OL2PURVIEW_CHAOS_SCALE, default 4: 64 generated runs besides the real sequences) and, as the floor measured in the
same run, CHAOS_SCALE=1; each OL2PURVIEW_CHAOS_REPEATS times (default 3), a new random seed each time. Prints, per
store, the median seconds of each scale, their ratio, and every seed with its outcome (a failing seed replays with
CHAOS_SEED=N CHAOS_SCALE=N pytest tests/e2e/test_chaos.py).
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
TEST = "tests/e2e/test_chaos.py"
FINISHED = re.compile(r"^chaos seed (\d+), store (\w+): .*; ([\d.]+) s$")
FAILED = re.compile(r"^FAILED \S+\[(\w+)\]")


def run_once(scale: int) -> list[tuple[str, int, float, bool]]:
    """(store, seed, seconds, passed) for each store, from one pytest run of the chaos test at this scale."""
    env = {**os.environ, "CHAOS_SCALE": str(scale), "PYTHONUNBUFFERED": "1"}
    env.pop("CHAOS_SEED", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", TEST, "-q", "-s", "-p", "no:randomly", "-p", "no:cacheprovider"],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    lines = done.stdout.splitlines()
    failed = {match.group(1) for line in lines if (match := FAILED.match(line))}
    results = [
        (m.group(2), int(m.group(1)), float(m.group(3)), m.group(2) not in failed)
        for line in lines
        if (m := FINISHED.match(line))
    ]
    if not results:
        raise RuntimeError(
            f"the chaos test printed no result (exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-2000:]}"
        )
    return results


def main() -> None:
    scale = int(os.environ.get("OL2PURVIEW_CHAOS_SCALE") or 4)
    repeats = int(os.environ.get("OL2PURVIEW_CHAOS_REPEATS") or 3)
    seconds: dict[tuple[str, int], list[float]] = defaultdict(list)
    for number in range(repeats):
        for this_scale in (1, scale):
            for store, seed, elapsed, passed in run_once(this_scale):
                seconds[(store, this_scale)].append(elapsed)
                print(
                    f"  run {number + 1}, scale {this_scale}, store {store}: seed {seed}, {elapsed:.1f} s, "
                    f"{'passed' if passed else 'FAILED'}",
                    flush=True,
                )
    for store in sorted({store for store, _ in seconds}):
        floor = statistics.median(seconds[(store, 1)])
        large = statistics.median(seconds[(store, scale)])
        print(
            f"chaos on {store}: scale {scale} median {large:.1f} s, scale 1 (floor) median {floor:.1f} s, "
            f"ratio {large / floor:.2f} ({repeats} runs each)"
        )


if __name__ == "__main__":
    main()
