"""What the runner says once: the lines about what a plan could not write as asked (`log_plan`), and the bounded
memory of what was said (`ReportedOnce`)."""

from __future__ import annotations

import logging
import threading

from olparser.lineage import LineagePlan
from olparser.lineage.governance import UNRESOLVED_NOTE
from olparser.lineage.plan import unmatched_text

log = logging.getLogger(__name__)


def log_plan(key: str, plan: LineagePlan, reported: "ReportedOnce") -> None:
    """What the plan could not write as asked: said once per run (and set of datasets, or note)."""
    if plan.unmatched and reported.first_time(key, plan.unmatched):
        log.info(
            "run %s: no mapping rule for %d dataset(s), written as placeholders (qn-tester --explain says why): %s",
            key,
            len(plan.unmatched),
            unmatched_text(plan.unmatched),
        )
    for note in plan.notes:  # an ownership name without an object id: said once per process and names
        if note.startswith(UNRESOLVED_NOTE) and reported.first_time("contacts:" + note, True):
            log.warning("%s; they are not written as contacts", note)
    if plan.notes and any("MAX_" in note for note in plan.notes):
        log.warning("run %s: %s", key, "; ".join(n for n in plan.notes if "MAX_" in n))


class ReportedOnce:
    """Which runs' unmatched datasets this process has logged, so that a run written again (a later event, the
    timer) does not repeat the line unless its set of unmatched datasets changed. Bounded: the oldest are forgotten."""

    def __init__(self, capacity: int = 4096) -> None:
        self._seen: dict[str, object] = {}
        self._capacity = capacity
        self._lock = threading.Lock()

    def seen(self, key: str) -> bool:
        with self._lock:
            return key in self._seen

    def first_time(self, key: str, value: object) -> bool:
        """True (and remembered) unless `key` was last reported with this same `value`."""
        with self._lock:
            if self._seen.get(key) == value:
                return False
            self._seen.pop(key, None)
            self._seen[key] = value  # dicts keep insertion order: the first key is the oldest
            if len(self._seen) > self._capacity:
                del self._seen[next(iter(self._seen))]
            return True
