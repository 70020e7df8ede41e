"""From the events of one run to its plan, and which run's version of each process and entity is kept: pure functions
over plain data, shared by the Spark job and the single-process runner.

- `plan_run`: the live path's merger (`merge_event`, order-independent) and builder (`build_lineage`) on every event
  of a run, whatever order they were read in; with the run's history record (olparser.history), failed runs too.
- `history_of_run`: a run's history record as the live path ends up recording it (a run without terminal event as
  INCOMPLETE), for `spark history`.
- `run_facts` / `merge_facts` / `Summary`: what the whole backfill must know, reduced by key: per process only the
  newest run's version is written (`run_instant`, the run's newest eventTime; ties broken by run key), as the live
  path's runner does; an owner or dataset that several runs write gets the newest run's content in every request,
  so the order in which requests reach the catalog does not matter; counts; unmatched namespaces.
- `selected_plan`: a run's plan minus the processes newer runs own, with the chosen versions of shared entities.
- Temporary datasets (olparser/lineage/edges.py): what each run passes on through the temporary datasets it writes is
  a fact too (("t", scope, namespace, name, run key)); a run that reads one is `deferred` — planned (`replan`) once
  the facts of every run are reduced and so every writer is known, as the live path writes a reader again when a
  writer comes. Only then does it count, and add its facts.
- Inherited orchestrators (olparser/lineage/inherited.py): an application run that an Airflow task ran passes on its
  parent and root the same way (its own run id the scope, `inherited.CHANNEL` the name); a SQL job that inherits
  them is deferred like a reader of a temporary dataset and planned with them (`lookup_passed`), as the live path
  looks them up in the run-state store.
"""

from __future__ import annotations

import hashlib
import zlib
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Iterable, Mapping

from olparser.contract.body import parse_encoded
from olparser.history import RunRecord, history_record
from olparser.jsontypes import JSON
from olparser.lineage import LineageOptions, LineagePlan, build_lineage
from olparser.lineage.build import dataset_resolver
from olparser.lineage.combine import entity_content, with_versions
from olparser.lineage.edges import is_temporary, temporary_scope, temporary_writes, upstream_inputs
from olparser.lineage.entities import Key, key_of
from olparser.lineage.identity import Orchestration
from olparser.lineage.inherited import CHANNEL, inheriting_scope, lookup_passed, passed_orchestration
from olparser.lineage.lifecycle import LifecycleChanges, lifecycle_changes, lifecycle_marks
from olparser.lineage.plan import is_process
from olparser.naming import MappingEngine
from olparser.pipeline import Decision, WritePolicy, decide
from olparser.runs import RunSnapshot, merge_event, snapshot_from_static
from olparser.runs.codec import passed_on_from_bytes, passed_on_to_bytes
from olparser.runs.marks import LifecycleMark
from olparser.runs.model import DatasetFacts
from olparser.runs.rules import INCOMPLETE, RunOrder, RunStatus, is_static_key, newest_static, run_order
from olparser.sql import ParseSql

from .report import Tally

Name = tuple[str, str]  # a dataset's (namespace, name)

Order = RunOrder
OLDEST = float("-inf")  # the order of a run without one (static lineage, no readable time): older than any run
PLANNED, WAITING, SKIPPED = RunStatus.PLANNED, RunStatus.WAITING, RunStatus.SKIPPED
DEFERRED = "deferred"  # reads temporary datasets, or inherits an orchestrator: planned once every writer is known
TemporaryKey = tuple[str, str, str]  # (scope, namespace, name) of a temporary dataset
BATCH_POLICY = WritePolicy().complete()  # the live path's defaults, nothing held: every event is there


@dataclass(frozen=True)
class RunResult:
    """One run after merging: `status` planned (a plan to write), waiting (not finished) or skipped (failed, or a
    run the builder writes nothing for); `unmatched` are the (namespace, name) pairs no rule matched; `record` its
    run-history record (a finished run that names a process)."""

    key: str
    status: str
    order: Order
    plan: LineagePlan | None = None
    unmatched: tuple[tuple[str, str], ...] = ()
    record: RunRecord | None = None
    passes_on: tuple[tuple[TemporaryKey, bytes], ...] = ()  # what it passes on through each temporary dataset
    snapshot: RunSnapshot | None = None  # a deferred run, merged: planned by `replan`
    lifecycle: LifecycleChanges = LifecycleChanges()  # the tables it drops and renames, applied when it is written


def merged_run(key: str, events: Iterable[bytes], max_datasets: int | None) -> RunSnapshot:
    """A run's events (zlib-compressed JSON) merged by the live path's merger, keeping at most `max_datasets` inputs
    and outputs each; static lineage: the newest declaration of its job or dataset, as in-order processing leaves."""
    if is_static_key(key):
        declared = newest_static(_event(data) for data in events)
        return snapshot_from_static(declared, max_datasets=max_datasets)
    run = None
    for data in events:
        run = merge_event(run, _event(data), max_datasets=max_datasets)
    assert run is not None
    return run


def _event(data: bytes) -> JSON:
    """An event as the contract wrote it (zlib-compressed JSON), read as `json.loads` reads it (body.parse_encoded)."""
    return parse_encoded(zlib.decompress(data))


def batch_order(key: str, run: RunSnapshot) -> Order:
    """The live path's `run_order`; a run without one is older than every run that has one."""
    return run_order(key, run) or (OLDEST, key)


def plan_run(
    key: str,
    events: Iterable[bytes],
    engine: MappingEngine,
    options: LineageOptions,
    parse_sql: ParseSql | None = None,
    policy: WritePolicy = BATCH_POLICY,
) -> RunResult:
    """Merge a run's events and build its plan as the live path does: its limits (`policy.max_datasets`, from
    MAX_DATASETS_PER_RUN) and its write/wait/skip decision (`decide`), column lineage from the run's SQL when
    `parse_sql` is given."""
    run = merged_run(key, events, policy.max_datasets)
    passes_on = _passes_on(run)
    if _reads_temporary(run):
        return RunResult(key, DEFERRED, batch_order(key, run), passes_on=passes_on, snapshot=run)
    return replace(_planned(key, run, engine, options, parse_sql, policy, {}, None), passes_on=passes_on)


def replan(
    result: RunResult,
    temporary: Mapping[TemporaryKey, list[bytes]],
    engine: MappingEngine,
    options: LineageOptions,
    parse_sql: ParseSql | None = None,
    policy: WritePolicy = BATCH_POLICY,
) -> RunResult:
    """A deferred run planned with what the writers of its temporary inputs pass on (`temporary`, the reduced
    facts of every run: Summary.temporary), followed as the live path follows them (`upstream_inputs`)."""
    run = result.snapshot
    assert run is not None
    planned = _planned(
        result.key, run, engine, options, parse_sql, policy, _upstream(run, temporary), _inherited(run, temporary)
    )
    return replace(planned, passes_on=result.passes_on)


def _reads_temporary(run: RunSnapshot) -> bool:
    """Whether the run needs what other runs pass on: its temporary inputs' writers, or its application's
    orchestrator."""
    return (temporary_scope(run) is not None and any(is_temporary(d) for d in run.inputs)) or inheriting_scope(
        run
    ) is not None


def _inherited(run: RunSnapshot, temporary: Mapping[TemporaryKey, list[bytes]]) -> Orchestration | None:
    """The parent and root its application passed on, from the reduced facts of every run."""
    scope = inheriting_scope(run)
    return lookup_passed(temporary, scope) if scope is not None else None


def _upstream(run: RunSnapshot, temporary: Mapping[TemporaryKey, list[bytes]]) -> dict[Name, tuple[DatasetFacts, ...]]:
    """What the run's temporary inputs stand for, from the reduced facts of every run (the live path asks the
    run-state store the same question)."""
    scope = temporary_scope(run)

    def lookup(names: Iterable[tuple[str, str]]) -> dict[Name, tuple[DatasetFacts, ...]]:
        # `scope` is set: only a run that reads temporary datasets is looked up (_reads_temporary).
        return {
            name: tuple(d for data in temporary[(scope, *name)] for d in passed_on_from_bytes(data))  # type: ignore[index]
            for name in names
            if (scope, *name) in temporary
        }

    return upstream_inputs(run, lookup)


def _passes_on(run: RunSnapshot) -> tuple[tuple[TemporaryKey, bytes], ...]:
    scope = temporary_scope(run)
    passed = passed_orchestration(run)
    orchestrator = (((passed[0], *CHANNEL), passed[1]),) if passed is not None else ()
    if scope is None:
        return orchestrator
    return orchestrator + tuple(
        ((scope, *name), passed_on_to_bytes(datasets)) for name, datasets in sorted(temporary_writes(run).items())
    )


def _planned(
    key: str,
    run: RunSnapshot,
    engine: MappingEngine,
    options: LineageOptions,
    parse_sql: ParseSql | None,
    policy: WritePolicy,
    upstream: Mapping[Name, tuple[DatasetFacts, ...]],
    inherited: Orchestration | None,
) -> RunResult:
    order = batch_order(key, run)
    decision = decide(run, policy.complete(), options)
    if decision is not Decision.WRITE:
        if decision is Decision.WAIT:
            return RunResult(key, WAITING, order)
        unwritten = build_lineage(
            run, engine, options, parse_sql=parse_sql, upstream=upstream, inherited=inherited
        )  # for the history only, as live
        return RunResult(key, SKIPPED, order, record=history_record(run, unwritten, options, status=run.event_type))
    plan = build_lineage(run, engine, options, parse_sql=parse_sql, upstream=upstream, inherited=inherited)
    changes = lifecycle_changes(run, partial(dataset_resolver, engine=engine, options=options))  # as live
    if not plan.entities and not plan.external_datasets:
        return RunResult(key, PLANNED, order, lifecycle=changes) if changes else RunResult(key, SKIPPED, order)
    unmatched = tuple(sorted({(u.namespace, u.name) for u in plan.unmatched}))
    return RunResult(
        key,
        PLANNED,
        order,
        plan,
        unmatched,
        history_record(run, plan, options, status=run.event_type),
        lifecycle=changes,
    )


def history_of_run(
    key: str,
    events: Iterable[bytes],
    engine: MappingEngine,
    options: LineageOptions,
    parse_sql: ParseSql | None = None,
    policy: WritePolicy = BATCH_POLICY,
) -> RunResult:
    """The record the live path keeps for this run once the timer has done its work (`record`: a finished run with
    its final status, a run without terminal event as INCOMPLETE; None when it names no process), and what it passes
    on through temporary datasets; a run that reads one is deferred (`history_replan`), as `plan_run` defers it."""
    run = merged_run(key, events, policy.max_datasets)
    passes_on = _passes_on(run)
    if _reads_temporary(run):
        return RunResult(key, DEFERRED, batch_order(key, run), passes_on=passes_on, snapshot=run)
    return RunResult(
        key,
        PLANNED,
        batch_order(key, run),
        record=_history(run, engine, options, parse_sql, {}, None),
        passes_on=passes_on,
    )


def history_replan(
    result: RunResult,
    temporary: Mapping[TemporaryKey, list[bytes]],
    engine: MappingEngine,
    options: LineageOptions,
    parse_sql: ParseSql | None = None,
) -> RunResult:
    """A deferred run's record, with what the writers of its temporary inputs pass on (as `replan`)."""
    run = result.snapshot
    assert run is not None
    record = _history(run, engine, options, parse_sql, _upstream(run, temporary), _inherited(run, temporary))
    return replace(result, status=PLANNED, record=record, snapshot=None)


def _history(
    run: RunSnapshot,
    engine: MappingEngine,
    options: LineageOptions,
    parse_sql: ParseSql | None,
    upstream: Mapping[Name, tuple[DatasetFacts, ...]],
    inherited: Orchestration | None,
) -> RunRecord | None:
    status = run.event_type if run.is_terminal else INCOMPLETE
    plan = build_lineage(
        run, engine, options, status=status, parse_sql=parse_sql, upstream=upstream, inherited=inherited
    )
    return history_record(run, plan, options, status=status)


@dataclass(frozen=True)
class Version:
    """One run's content of a shared entity (`digest` of its canonical JSON); `differs` when runs disagree."""

    order: Order
    entity: JSON
    digest: str
    differs: bool = False


def newer_version(a: Version, b: Version) -> Version:
    """The newer run's version, remembering whether any two versions differed."""
    newest = a if a.order >= b.order else b
    differs = a.differs or b.differs or a.digest != b.digest
    return newest if newest.differs == differs else Version(newest.order, newest.entity, newest.digest, differs)


def run_facts(result: RunResult) -> list[tuple[tuple[Any, ...], Any]]:
    """What the whole backfill must know about a run, as (key, value) pairs that `merge_facts` reduces by key:
    ("p", process) -> the run's order (the newest run wins the process); ("e", type, name) -> its Version of each
    owner, dataset and column; ("u", namespace, name) -> True for each dataset no rule matched; ("r",) -> a Tally
    counting the run by status; ("t", scope, namespace, name, run key) -> what it passes on through a temporary
    dataset. A deferred run has only these, and ("d",) -> True."""
    passed = [(("t", *name, result.key), data) for name, data in result.passes_on]
    if result.status == DEFERRED:
        return [*passed, (("d",), True)]
    facts: list[tuple[tuple[Any, ...], Any]] = [(("r",), Tally(runs=Counter({result.status: 1}))), *passed]
    if result.plan is None:
        return facts
    for entity in (*result.plan.external_datasets, *result.plan.entities):
        if is_process(entity):
            facts.append((("p", entity["attributes"]["qualifiedName"]), result.order))
        else:
            digest = hashlib.sha1(entity_content(entity).encode("utf-8")).hexdigest()
            facts.append((("e", *key_of(entity)), Version(result.order, entity, digest)))
    facts += [(("u", namespace, name), True) for namespace, name in result.unmatched]
    return facts


def merge_facts(a: Any, b: Any) -> Any:
    """Reduce two values of one fact key (see run_facts)."""
    if isinstance(a, Version):
        return newer_version(a, b)
    if isinstance(a, Tally):
        return a.add(b)
    if isinstance(a, tuple):
        return max(a, b)
    return a


@dataclass
class Summary:
    """The facts of every run, reduced: counts, the winning run of each process, the versions of shared entities
    that runs disagree about (the newest), and the unmatched datasets' namespaces with their dataset counts."""

    tally: Tally = field(default_factory=Tally)
    winners: dict[str, str] = field(default_factory=dict)  # process -> run key
    versions: dict[Key, JSON] = field(default_factory=dict)
    unmatched: Counter[str] = field(default_factory=Counter)
    temporary: dict[TemporaryKey, list[bytes]] = field(default_factory=dict)  # by writer's run key
    deferred: bool = False  # some runs wait for `temporary` (`replan`)

    @classmethod
    def of(cls, reduced: Iterable[tuple[tuple[Any, ...], Any]]) -> "Summary":
        summary = cls()
        writers: dict[TemporaryKey, list[tuple[str, bytes]]] = {}
        for key, value in reduced:
            if key[0] == "r":
                summary.tally = summary.tally.add(value)
            elif key[0] == "p":
                summary.winners[key[1]] = value[1]
            elif key[0] == "e" and value.differs:
                summary.versions[(key[1], key[2])] = value.entity
            elif key[0] == "u":
                summary.unmatched[key[1]] += 1
            elif key[0] == "t":
                writers.setdefault(key[1:4], []).append((key[4], value))
            elif key[0] == "d":
                summary.deferred = True
        summary.temporary = {name: [data for _, data in sorted(found)] for name, found in writers.items()}
        return summary


class FactReducer:
    """`run_facts` reduced by key in this process, run by run (the single-process runner's reduceByKey)."""

    def __init__(self) -> None:
        self._reduced: dict[tuple[Any, ...], Any] = {}

    def add(self, result: RunResult) -> None:
        self.add_facts(run_facts(result))

    def add_facts(self, facts: Iterable[tuple[tuple[Any, ...], Any]]) -> None:
        for key, value in facts:
            self._reduced[key] = merge_facts(self._reduced[key], value) if key in self._reduced else value

    def items(self) -> list[tuple[tuple[Any, ...], Any]]:
        """The facts reduced so far, as (key, value) pairs that `merge_facts` reduces further."""
        return list(self._reduced.items())

    def summary(self) -> Summary:
        return Summary.of(self._reduced.items())


def reduce_facts(results: Iterable[RunResult]) -> Summary:
    reducer = FactReducer()
    for result in results:
        reducer.add(result)
    return reducer.summary()


@dataclass(frozen=True)
class Selected:
    """A run's plan as it will be written (None: nothing to write) and how many of its processes newer runs own;
    for the run-state ledger, what the whole plan has: its processes' names and the keys of those left out."""

    key: str
    order: Order
    plan: LineagePlan | None
    superseded: int
    processes: tuple[str, ...] = ()
    left_out: tuple[Key, ...] = ()
    lifecycle: LifecycleChanges = LifecycleChanges()  # the tables the run drops and renames (`RunResult.lifecycle`)

    @property
    def run_time(self) -> float | None:
        """The run's time as the ledger records it (None: static lineage or no readable time, as on the live path)."""
        return None if self.order[0] == OLDEST else self.order[0]

    def owned_keys(self) -> tuple[Key, ...]:
        """What the run answers for, as the live path's ledger records it: its whole plan's connector-owned
        entities, processes newer runs own included."""
        return tuple(sorted({*(self.plan.owned_keys() if self.plan is not None else ()), *self.left_out}))


def selected_plan(result: RunResult, winners: Mapping[str, str], versions: Mapping[Key, JSON]) -> Selected:
    """Drop the processes another run owns (`winners`: process -> run key); the run still writes its owners and
    datasets, as the live path writes them for a run all of whose processes a newer run wrote."""
    if result.plan is None:
        return Selected(result.key, result.order, None, 0, lifecycle=result.lifecycle)
    processes = result.plan.process_names()
    lost = {name for name in processes if winners.get(name, result.key) != result.key}
    left_out = tuple(
        sorted(key_of(e) for e in result.plan.entities if is_process(e) and e["attributes"]["qualifiedName"] in lost)
    )
    plan = result.plan.without_processes(lost) if lost else result.plan
    return Selected(
        result.key, result.order, with_versions(plan, versions), len(lost), processes, left_out, result.lifecycle
    )


def lifecycle_keys(selected: Selected, wanted: frozenset[Key]) -> list[tuple[Key, Order]]:
    """(key, the run's order) for each entity of `wanted` (keys some run of the batch drops or renames away) the
    run's plan writes: reduced to the newest writer of each, it says which changes a newer run undoes."""
    if selected.plan is None or not wanted:
        return []
    return [(key, selected.order) for key in {key_of(e) for e in selected.plan.entities} if key in wanted]


def standing_changes(changing: Iterable[Selected], written: Mapping[Key, Order]) -> list[tuple[str, LifecycleChanges]]:
    """The batch's drops and renames in the runs' time order, each without what a newer run writes again
    (`written`: each key's newest writer, from `lifecycle_keys`)."""
    found = [(s.order, s.key, s.lifecycle.newer_than(s.order, written)) for s in changing]
    return [(key, changes) for _, key, changes in sorted(found, key=lambda item: item[:2]) if changes]


def batch_marks(
    changing: Iterable[Selected], written: Mapping[Key, Order], links: Mapping[Key, Key]
) -> dict[Key, LifecycleMark]:
    """What the batch tells the run-state store about the names its runs drop and rename (`LifecycleMark`, as the
    live path records them): each change, and the newest write of each of those names in the batch; the live path
    then treats a late event of an older run as it would after processing these runs itself."""
    marks = {key: LifecycleMark(written_at=order) for key, order in written.items()}
    for selected in changing:
        for key, mark in lifecycle_marks(selected.order, (), selected.lifecycle, links).items():
            marks[key] = marks.get(key, LifecycleMark()).merged(mark)
    return marks
