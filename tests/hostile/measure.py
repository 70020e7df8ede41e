"""CPU time of a call, for the hostile suite and bench/hostile.py: seconds of this process only (other processes on
the machine do not count); an IngestError is an answer, not a failure."""
from __future__ import annotations

import time
from typing import Any, Callable

from olparser.contract import IngestError


def cpu_times(fn: Callable[[], Any], repeat: int) -> list[float]:
    """The CPU seconds of each of `repeat` runs of `fn`."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        try:
            fn()
        except IngestError:
            pass
        times.append(time.process_time() - start)
    return times
