"""From the events of one run to its plan, and which run's version of each process and entity is kept: pure functions
over plain data, shared by the Spark job and the single-process runner.

- `plan_run`: the live path's merger (`merge_event`, order-independent) and builder (`build_lineage`) on every event
  of a run, whatever order they were read in.
- `process_claims` / `newest_claim`: per process, only the newest run's version is written (`run_instant`, the
  run's newest eventTime; ties broken by run key), as the live path's runner does.
- `entity_claims` / `newer_version`: an owner or dataset that several runs write gets the newest run's content in
  every request, so the order in which requests reach the catalog does not matter.
- `selected_plan`: a run's plan minus the processes newer runs own, with the chosen versions of shared entities.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterable, Mapping

from olparser.lineage import LineageOptions, LineagePlan, build_lineage, should_write_lineage
from olparser.lineage.combine import entity_content, with_versions
from olparser.lineage.entities import JSON, Key, key_of
from olparser.naming import MappingEngine
from olparser.runs import merge_event, run_instant, snapshot_from_static

from .records import STATIC_KEY_PREFIX

Order = tuple[float, str]  # (run time, run key): the newest run has the largest
OLDEST = float("-inf")
PLANNED, WAITING, SKIPPED = "planned", "waiting", "skipped"


@dataclass(frozen=True)
class RunResult:
    """One run after merging: `status` planned (a plan to write), waiting (not finished) or skipped (failed, or a
    run the builder writes nothing for); `unmatched` are the (namespace, name) pairs no rule matched."""

    key: str
    status: str
    order: Order
    plan: LineagePlan | None = None
    unmatched: tuple[tuple[str, str], ...] = ()


def plan_run(key: str, events: Iterable[bytes], engine: MappingEngine, options: LineageOptions) -> RunResult:
    """Merge a run's events (static lineage: its one event) and build its plan as the live path does."""
    if key.startswith(STATIC_KEY_PREFIX):
        run = snapshot_from_static(json.loads(next(iter(events))))
    else:
        run = None
        for data in events:
            run = merge_event(run, json.loads(data))
    assert run is not None
    order = (run_instant(run) or OLDEST, key)
    if not should_write_lineage(run, options):
        return RunResult(key, SKIPPED if run.is_terminal else WAITING, order)
    plan = build_lineage(run, engine, options)
    if not plan.entities and not plan.external_datasets:
        return RunResult(key, SKIPPED, order)
    unmatched = tuple(sorted({(u.namespace, u.name) for u in plan.unmatched}))
    return RunResult(key, PLANNED, order, plan, unmatched)


def process_claims(result: RunResult) -> list[tuple[str, Order]]:
    """(process qualifiedName, the run's order) for every process the run's plan writes."""
    return [(name, result.order) for name in result.plan.process_names()] if result.plan else []


def newest_claim(a: Order, b: Order) -> Order:
    return max(a, b)


@dataclass(frozen=True)
class Version:
    """One run's content of a shared entity; `differs` when runs disagree about it."""

    order: Order
    entity: JSON
    content: str
    differs: bool = False


def entity_claims(result: RunResult) -> list[tuple[Key, Version]]:
    """The owners, datasets and columns of a run's plan with their content (processes are chosen per process)."""
    if result.plan is None:
        return []
    return [(key_of(e), Version(result.order, e, entity_content(e)))
            for e in (*result.plan.external_datasets, *result.plan.entities) if not is_process(e)]


def is_process(entity: JSON) -> bool:
    """Processes are the entities that carry a run (`lastRunId`), as LineagePlan.process_names reads them."""
    return "lastRunId" in entity.get("attributes", {})


def newer_version(a: Version, b: Version) -> Version:
    """The newer run's version, remembering whether any two versions differed."""
    newest = a if a.order >= b.order else b
    differs = a.differs or b.differs or a.content != b.content
    return newest if newest.differs == differs else Version(newest.order, newest.entity, newest.content, differs)


@dataclass(frozen=True)
class Selected:
    """A run's plan as it will be written (None: nothing left) and how many of its processes newer runs own."""

    key: str
    order: Order
    plan: LineagePlan | None
    superseded: int


def selected_plan(result: RunResult, winners: Mapping[str, str], versions: Mapping[Key, JSON]) -> Selected:
    """Drop the processes another run owns (`winners`: process -> run key); a run that loses every process writes
    nothing (as the live path skips a run all of whose processes a newer run wrote)."""
    if result.plan is None:
        return Selected(result.key, result.order, None, 0)
    processes = result.plan.process_names()
    lost = {name for name in processes if winners.get(name, result.key) != result.key}
    if lost and len(lost) == len(processes):
        return Selected(result.key, result.order, None, len(lost))
    plan = result.plan.without_processes(lost) if lost else result.plan
    return Selected(result.key, result.order, with_versions(plan, versions), len(lost))
