"""A HistoryReader over records held in memory: what `spark history` walks once Spark has computed the records of a
window from the event archive (and what tests use to walk records without a store). Pure."""

from __future__ import annotations

from typing import Iterable

from .model import Access, ProcessRun, RunFacts, RunRecord
from .store import slim
from .window import Window


class MemoryHistory:
    """The records of many runs, indexed by dataset and by process, newest start first (as the stores answer)."""

    def __init__(self, records: Iterable[RunRecord]) -> None:
        self.records = {r.run_id: r for r in records}
        self._accesses: dict[str, list[Access]] = {}
        self._processes: dict[str, list[tuple[RunFacts, ProcessRun]]] = {}
        for record in sorted(self.records.values(), key=lambda r: (-r.facts.start, r.run_id)):
            facts = slim(record.facts)
            for access in record.accesses():
                self._accesses.setdefault(access.dataset.qualified_name, []).append(
                    Access(access.dataset, access.access, access.process, access.process_type, facts)
                )
            for process in record.processes:
                self._processes.setdefault(process.qualified_name, []).append((facts, process))

    def dataset_accesses(self, dataset: str, window: Window, limit: int, access: str | None = None) -> list[Access]:
        return [
            a
            for a in self._accesses.get(dataset, ())
            if window.overlaps(a.run.start, a.run.end) and access in (None, a.access)
        ][: max(limit, 0)]

    def process_runs(self, process: str, window: Window, limit: int) -> list[tuple[RunFacts, ProcessRun]]:
        return [(f, p) for f, p in self._processes.get(process, ()) if window.overlaps(f.start, f.end)][: max(limit, 0)]

    def newest_access(self, dataset: str) -> Access | None:
        found = self._accesses.get(dataset)
        return found[0] if found else None

    def run(self, run_id: str) -> RunRecord | None:
        return self.records.get(run_id)
