"""Which planned runs a dry run's listing can need, decided run by run over one part of the runs (a Spark partition):
a pure class, no I/O.

The listing holds, for every entity, the version the selected plans write (`runs.selected_plan`): a process as its
newest run plans it, any other entity as every run plans it alike (or, where runs disagree, as the newest run's
version puts it into all of them). So a run that is not the newest of its part for any entity it plans adds nothing:
each of its processes is superseded by a newer run of the same part (it is never the winner), each of its other
entities is listed alike by a run that is kept. Such a run is dropped before it is ever stored or selected; only its
superseded processes are counted. On the bench's history (each notebook run again and again) that leaves about one
run in ten.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from olparser.lineage.entities import Key, key_of

from .runs import Order, RunResult

T = TypeVar("T")
HELD_ENTITIES = 20_000  # runs held with more entities than this in all are passed on at once (about 100 MB)


@dataclass
class _Candidate(Generic[T]):
    processes: int  # superseded when the run is dropped
    newest_of: int  # entities this run is the newest of so far
    value: T | None  # what to pass on if it is kept (None: passed on already)
    size: int  # its plan's entities


class NewestRuns(Generic[T]):
    """Planned runs in, the ones a dry run's listing can need out (see the module's doc): `add` each planned run with
    the value to pass on for it, `kept` at the end. `superseded` counts the processes of the runs dropped. Runs
    with at most `held_entities` entities in all wait for the end: beyond that, the waiting ones are passed on at
    once (as `add` returns them), so that memory stays bounded whatever the runs; older runs are still dropped."""

    def __init__(self, held_entities: int = HELD_ENTITIES) -> None:
        self.held_entities = held_entities
        self.superseded = 0
        self._newest: dict[Key, tuple[Order, str]] = {}
        self._runs: dict[str, _Candidate[T]] = {}
        self._held = 0

    def add(self, result: RunResult, value: T) -> list[T]:
        """Consider a planned run; returns the values to pass on now (beyond what may wait), usually none."""
        assert result.plan is not None
        entities = (*result.plan.external_datasets, *result.plan.entities)
        newest_of = 0
        for key in {key_of(e) for e in entities}:
            current = self._newest.get(key)
            if current is None or current[0] < result.order:
                if current is not None:
                    self._release(current[1])
                self._newest[key] = (result.order, result.key)
                newest_of += 1
        processes = len(set(result.plan.process_names()))
        if not newest_of:
            self.superseded += processes
            return []
        self._runs[result.key] = _Candidate(processes, newest_of, value, len(entities))
        self._held += len(entities)
        return self._passed_on() if self._held > self.held_entities else []

    def kept(self) -> list[T]:
        """The values of the runs still kept at the end that were not passed on yet."""
        return self._passed_on()

    def _release(self, run: str) -> None:
        candidate = self._runs[run]
        candidate.newest_of -= 1
        if candidate.newest_of:
            return
        del self._runs[run]
        if candidate.value is not None:  # dropped before it was passed on: only its count remains
            self._held -= candidate.size
            self.superseded += candidate.processes

    def _passed_on(self) -> list[T]:
        values = [c.value for c in self._runs.values() if c.value is not None]
        for candidate in self._runs.values():
            candidate.value = None
        self._held = 0
        return values
