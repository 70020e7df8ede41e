"""Temporary datasets (olparser/lineage/edges.py) in the run-state store: what a run that writes them passes on,
and what a run that reads them finds (it is noted as their reader)."""

from __future__ import annotations

from typing import Callable, Iterable

from olparser.lineage.edges import temporary_scope, temporary_writes, upstream_inputs
from olparser.runs import RunSnapshot, RunStateStore
from olparser.runs.codec import passed_on_from_bytes, passed_on_to_bytes
from olparser.runs.model import DatasetFacts


def record_temporary(store: RunStateStore, key: str, run: RunSnapshot, now: float) -> frozenset[str]:
    """Remember what the run passes on through the temporary datasets it writes (olparser/lineage/edges.py);
    the runs that read them, to be written again."""
    scope = temporary_scope(run)
    writes = temporary_writes(run) if scope is not None else {}
    if scope is None or not writes:
        return frozenset()
    return store.record_temporary(
        scope, key, {name: passed_on_to_bytes(datasets) for name, datasets in writes.items()}, now=now
    )


def upstream(
    store: RunStateStore, run: RunSnapshot, clock: Callable[[], float]
) -> dict[tuple[str, str], tuple[DatasetFacts, ...]]:
    """What the run's temporary inputs stand for: their writers' inputs, as far as the store knows them (the run
    is noted as their reader, so that a writer that comes later writes it again)."""
    scope, run_id = temporary_scope(run), run.run_id
    if scope is None or run_id is None:
        return {}

    def lookup(names: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[DatasetFacts, ...]]:
        found = store.temporary_sources(scope, list(names), run_id, now=clock())
        return {name: tuple(d for data in passed for d in passed_on_from_bytes(data)) for name, passed in found.items()}

    return upstream_inputs(run, lookup)
