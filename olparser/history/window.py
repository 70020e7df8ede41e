"""Lineage in a time window: a breadth-first walk over the run history (CDAP's lineage computation). Pure: it reads
through `HistoryReader`, which both stores implement and the Spark job implements over its records in memory.

A run overlaps the window [since, until) when it started before `until` and ended at or after `since`, or has not
ended (an INCOMPLETE run: no terminal event, so it may still be running). One step of the walk from a dataset:
upstream, the runs in the window that wrote it, through which processes, and what those runs of those processes
read; downstream, the runs that read it and what those runs wrote. Each dataset is expanded once per direction;
`depth` counts process hops, as Atlas's lineage does. Every process comes with its runs in the window, every edge
with the runs that made it. With a column, the column lineage each run recorded is walked the same way
(olparser.lineage.column_graph, one process per run).

Bounded: at most `WalkLimits.max_nodes` datasets and processes, `max_rows` history rows read, `max_reads` reads
of the store (each a few requests on Table storage; the store's own `max_reads` when the limits set none: a hub that
hundreds of processes read would cost two requests per process), `max_rows_per_read` rows of one dataset's accesses
or one process's runs (the newest; the store's own when the limits set none: on Table storage one page per key
range) and `seconds` of wall time; what is cut short says so (`truncated`).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Protocol, TypeVar

from olparser.jsontypes import JSON
from olparser.lineage.column_graph import ColumnGraph, ProcessColumns
from olparser.lineage.column_graph import DatasetRef as ColumnDataset
from olparser.lineage.metadata import iso_time

from .model import READ, WRITE, Access, DatasetRef, ProcessRun, RunFacts, RunRecord

_Row = TypeVar("_Row")  # a row the history reader returns (Access, or a run and its process)

DIRECTIONS = ("upstream", "downstream", "both")
COLUMN_DIRECTIONS = {"upstream": "up", "downstream": "down", "both": "both"}


@dataclass(frozen=True)
class Window:
    """[since, until) in Unix seconds."""

    since: float
    until: float

    def overlaps(self, start: float, end: float | None) -> bool:
        return start < self.until and (end is None or end >= self.since)


@dataclass(frozen=True)
class WalkLimits:
    """What one query may cost (README "Limits")."""

    max_depth: int = 10
    max_nodes: int = 1000
    max_rows: int = 100_000
    max_runs_listed: int = 200
    seconds: float = 10.0
    max_reads: int | None = None  # None: the reader's own bound (its `max_reads` attribute), if any
    max_rows_per_read: int | None = None  # None: the reader's own bound (its `max_rows_per_read` attribute), if any


class HistoryReader(Protocol):
    """What the walk reads. A store may answer more rows than overlap the window (its key ranges are coarse): the
    walk keeps those that do. Rows come newest start first, at most `limit` of them; `access` (read or write)
    keeps one kind only, so that walking up from a dataset that many processes read does not read their reads."""

    def dataset_accesses(self, dataset: str, window: Window, limit: int, access: str | None = None) -> list[Access]: ...

    def process_runs(self, process: str, window: Window, limit: int) -> list[tuple[RunFacts, ProcessRun]]: ...

    def newest_access(self, dataset: str) -> Access | None: ...

    def run(self, run_id: str) -> RunRecord | None: ...


def run_summary(facts: RunFacts) -> JSON:
    """A run as the lineage answer lists it; `runBy` (the orchestrator's `{namespace}/{job}`) when something ran
    it (an Airflow task or DAG, a pipeline: olparser/lineage/identity.py)."""
    summary = {
        "runId": facts.run_id,
        "status": facts.status,
        "start": iso_time(facts.start),
        "end": iso_time(facts.end) or None,
        "durationMs": facts.duration_ms,
        "user": facts.metadata.get("user", ""),
    }
    if facts.metadata.get("runBy"):
        summary["runBy"] = facts.metadata["runBy"]
    return summary


def run_detail(record: RunRecord) -> JSON:
    """One run with its accesses and metadata (GET /runs/{runId})."""
    facts = record.facts
    return {
        **run_summary(facts),
        "job": facts.job,
        "owner": facts.owner,
        "ownerType": facts.owner_type,
        "metadata": facts.metadata,
        "processes": [
            {
                "qualifiedName": p.qualified_name,
                "typeName": p.type_name,
                "name": p.name,
                "inputs": [_dataset_json(d) for d in p.inputs],
                "outputs": [_dataset_json(d) for d in p.outputs],
            }
            for p in record.processes
        ],
        "accesses": [
            {
                "dataset": a.dataset.qualified_name,
                "typeName": a.dataset.type_name,
                "access": a.access,
                "process": a.process,
            }
            for a in record.accesses()
        ],
    }


def _dataset_json(dataset: DatasetRef) -> JSON:
    return {"qualifiedName": dataset.qualified_name, "typeName": dataset.type_name}


@dataclass
class _Process:
    type_name: str
    name: str
    owner: str
    job: str
    distance: int
    runs: dict[str, RunFacts] = field(default_factory=dict)


class _Walk:
    def __init__(self, reader: HistoryReader, window: Window, limits: WalkLimits, clock: Callable[[], float]) -> None:
        self.reader, self.window, self.limits, self.clock = reader, window, limits, clock
        self.deadline = clock() + limits.seconds
        self.rows = 0
        self.reads = 0
        self.truncated: str | None = None
        self.cut: str | None = None  # a read that met `max_rows_per_read`: its newest rows kept, the walk goes on
        self.datasets: dict[str, JSON] = {}
        self.processes: dict[str, _Process] = {}
        self.edges: dict[tuple[str, str], tuple[str, dict[str, RunFacts]]] = {}
        self.used: dict[tuple[str, str], ProcessRun] = {}  # (process, run) -> what that run of it did
        self._accesses: dict[tuple[str, str], list[Access]] = {}
        self._process_runs: dict[str, dict[str, tuple[RunFacts, ProcessRun]]] = {}

    # --- reading, within the budget ---------------------------------------------------------------------------
    def _budget(self) -> int:
        return self.limits.max_rows - self.rows

    def _stop(self) -> bool:
        if self.truncated is None:
            if self.clock() > self.deadline:
                self.truncated = f"the query took longer than {self.limits.seconds:g} s"
            elif len(self.datasets) + len(self.processes) > self.limits.max_nodes:
                self.truncated = f"more than {self.limits.max_nodes} datasets and processes"
            elif self._budget() <= 0:
                self.truncated = f"more than {self.limits.max_rows} history rows"
            elif self.limits.max_reads is not None and self.reads >= self.limits.max_reads:
                self.truncated = f"more than {self.limits.max_reads} reads of the history"
        return self.truncated is not None

    def _limit(self) -> int:
        """The rows the next read may answer."""
        per_read = self.limits.max_rows_per_read
        return self._budget() if per_read is None else min(self._budget(), per_read)

    def _read(self, rows: list[_Row], limit: int) -> list[_Row]:
        self.rows += len(rows)
        self.reads += 1
        if len(rows) >= limit and limit == self.limits.max_rows_per_read and self.cut is None:
            self.cut = f"more than {limit} rows of one dataset or process in the window (the newest kept)"
        return rows

    def accesses(self, dataset: str, access: str) -> list[Access]:
        """The `access` rows of `dataset` whose runs overlap the window (and the dataset's type from them)."""
        if (dataset, access) not in self._accesses:
            limit = self._limit()
            rows = self._read(self.reader.dataset_accesses(dataset, self.window, limit, access), limit)
            self._accesses[(dataset, access)] = [a for a in rows if self.window.overlaps(a.run.start, a.run.end)]
            for row in rows[:1]:
                self.add_dataset(row.dataset, 0)
        return self._accesses[(dataset, access)]

    def process_runs(self, process: str) -> dict[str, tuple[RunFacts, ProcessRun]]:
        if process not in self._process_runs:
            limit = self._limit()
            rows = self._read(self.reader.process_runs(process, self.window, limit), limit)
            self._process_runs[process] = {
                facts.run_id: (facts, run) for facts, run in rows if self.window.overlaps(facts.start, facts.end)
            }
        return self._process_runs[process]

    # --- the graph ---------------------------------------------------------------------------------------------
    def add_dataset(self, dataset: DatasetRef, distance: int) -> None:
        known = self.datasets.setdefault(dataset.qualified_name, {"typeName": dataset.type_name, "distance": distance})
        if not known["typeName"]:
            known["typeName"] = dataset.type_name

    def add_edge(self, source: str, target: str, kind: str, facts: RunFacts) -> None:
        self.edges.setdefault((source, target), (kind, {}))[1][facts.run_id] = facts

    def walk(self, root: str, upstream: bool, depth: int) -> None:
        sign = -1 if upstream else 1
        visited = {root}
        queue = deque([(root, 0)])
        while queue and not self._stop():
            dataset, hops = queue.popleft()
            if hops >= depth:
                continue
            by_process: dict[str, list[Access]] = {}
            for access in self.accesses(dataset, WRITE if upstream else READ):
                by_process.setdefault(access.process, []).append(access)
            for process_name in sorted(by_process):
                if self._stop():
                    break
                runs = self.process_runs(process_name)
                for access in by_process[process_name]:
                    self._add_process_run(process_name, access, runs.get(access.run.run_id), sign * (hops + 1))
                    edge = (process_name, dataset) if upstream else (dataset, process_name)
                    self.add_edge(*edge, WRITE if upstream else READ, access.run)
                    found = runs.get(access.run.run_id)
                    if found is None:  # its process row is gone (purged meanwhile): nothing beyond it
                        continue
                    facts, process_run = found
                    for far in process_run.inputs if upstream else process_run.outputs:
                        self.add_dataset(far, sign * (hops + 1))
                        edge = (far.qualified_name, process_name) if upstream else (process_name, far.qualified_name)
                        self.add_edge(*edge, READ if upstream else WRITE, facts)
                        if far.qualified_name not in visited:
                            visited.add(far.qualified_name)
                            queue.append((far.qualified_name, hops + 1))

    def _add_process_run(
        self, name: str, access: Access, found: tuple[RunFacts, ProcessRun] | None, distance: int
    ) -> None:
        node = self.processes.get(name)
        if node is None:
            facts = access.run
            node = self.processes[name] = _Process(
                access.process_type, found[1].name if found else "", facts.owner, facts.job, distance
            )
            for run_id, (run_facts, _) in self.process_runs(name).items():  # every run of it in the window
                node.runs[run_id] = run_facts
        node.runs.setdefault(access.run.run_id, access.run)
        if found is not None:
            self.used[(name, access.run.run_id)] = found[1]

    # --- the answer --------------------------------------------------------------------------------------------
    def _runs_json(self, runs: Iterable[RunFacts]) -> tuple[list[JSON], int]:
        ordered = sorted(runs, key=lambda f: (-f.start, f.run_id))
        return [run_summary(f) for f in ordered[: self.limits.max_runs_listed]], len(ordered)

    def graph_json(self, keep_datasets: set[str] | None = None, keep_processes: set[str] | None = None) -> JSON:
        datasets = [
            {"qualifiedName": qn, **info}
            for qn, info in self.datasets.items()
            if keep_datasets is None or qn in keep_datasets
        ]
        processes = []
        for qn, node in self.processes.items():
            if keep_processes is not None and qn not in keep_processes:
                continue
            runs, count = self._runs_json(node.runs.values())
            processes.append(
                {
                    "qualifiedName": qn,
                    "typeName": node.type_name,
                    "name": node.name,
                    "owner": node.owner,
                    "job": node.job,
                    "distance": node.distance,
                    "runCount": count,
                    "runs": runs,
                }
            )
        kept = {d["qualifiedName"] for d in datasets} | {p["qualifiedName"] for p in processes}
        edges = []
        for (source, target), (kind, edge_runs) in self.edges.items():
            if source in kept and target in kept:
                ordered = sorted(edge_runs.values(), key=lambda f: (-f.start, f.run_id))
                edges.append(
                    {
                        "from": source,
                        "to": target,
                        "kind": kind,
                        "runCount": len(ordered),
                        "runs": [f.run_id for f in ordered[: self.limits.max_runs_listed]],
                    }
                )
        return {
            "datasets": sorted(datasets, key=lambda d: (d["distance"], d["qualifiedName"])),
            "processes": sorted(processes, key=lambda p: (p["distance"], p["qualifiedName"])),
            "edges": sorted(edges, key=lambda e: (e["from"], e["to"])),
        }


def lineage_in_window(
    reader: HistoryReader,
    qualified_name: str,
    window: Window,
    direction: str = "both",
    depth: int = 3,
    *,
    column: str | None = None,
    limits: WalkLimits = WalkLimits(),
    clock: Callable[[], float] = time.monotonic,
) -> JSON:
    """The graph of datasets and processes whose runs overlapped `window`, from the dataset `qualified_name`."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    if not 1 <= depth <= limits.max_depth:
        raise ValueError(f"depth must be from 1 to {limits.max_depth}, got {depth}")
    for bound in ("max_reads", "max_rows_per_read"):  # the reader's own bounds, where the limits set none
        if getattr(limits, bound) is None and getattr(reader, bound, None) is not None:
            limits = replace(limits, **{bound: getattr(reader, bound)})
    walk = _Walk(reader, window, limits, clock)
    walk.datasets[qualified_name] = {"typeName": "", "distance": 0}
    for upstream in (True, False):
        if direction == "both" or (direction == "upstream") == upstream:
            walk.walk(qualified_name, upstream, depth)
    if not walk.datasets[qualified_name]["typeName"]:  # the root's type, from its newest access of any kind
        newest = reader.newest_access(qualified_name)
        if newest is not None:
            walk.add_dataset(newest.dataset, 0)
    answer: JSON = {
        "qualifiedName": qualified_name,
        "column": column,
        "since": iso_time(window.since),
        "until": iso_time(window.until),
        "direction": direction,
        "depth": depth,
    }
    if column is None:
        answer.update(walk.graph_json())
    else:
        answer.update(_column_answer(walk, qualified_name, column, direction, depth))
    answer["truncated"] = walk.truncated or walk.cut
    return answer


def _column_answer(walk: _Walk, root: str, column: str, direction: str, depth: int) -> JSON:
    """The column lineage the walked runs recorded, and the part of the graph it goes through."""
    facts = {(name, run_id): node.runs[run_id] for name, node in walk.processes.items() for run_id in node.runs}
    processes = []
    for (name, run_id), run in sorted(walk.used.items()):
        processes.append(
            ProcessColumns(
                guid=f"{name}\n{run_id}",
                qualified_name=name,
                type_name=walk.processes[name].type_name,
                name=run.name,
                inputs=tuple(ColumnDataset(d.qualified_name, d.type_name) for d in run.inputs),
                outputs=tuple(ColumnDataset(d.qualified_name, d.type_name) for d in run.outputs),
                column_mapping=run.column_mapping or None,
                column_lineage_detail=run.column_lineage_detail or None,
            )
        )
    graph = ColumnGraph(processes)
    trace = graph.trace(root, column, COLUMN_DIRECTIONS[direction], depth)
    edges: dict[tuple[tuple[str, str], tuple[str, str], str, str, bool, bool], dict[str, RunFacts]] = {}
    for edge in trace.edges:
        process, run_id = edge.process.split("\n", 1)
        key = (edge.source, edge.target, process, edge.label, edge.indirect, edge.dataset_level)
        edges.setdefault(key, {})[run_id] = facts[(process, run_id)]
    column_edges: list[dict[str, Any]] = []
    for (source, target, process, label, indirect, dataset_level), runs in sorted(edges.items()):
        ordered = sorted(runs.values(), key=lambda f: (-f.start, f.run_id))
        column_edges.append(
            {
                "from": {"dataset": source[0], "column": source[1]},
                "to": {"dataset": target[0], "column": target[1]},
                "process": process,
                "label": label,
                "indirect": indirect,
                "datasetLevel": dataset_level,
                "runs": [f.run_id for f in ordered[: walk.limits.max_runs_listed]],
            }
        )
    datasets = {qn for qn, _ in trace.distances}
    graph_part = walk.graph_json(datasets, {e["process"] for e in column_edges})
    columns = [
        {"dataset": qn, "column": c, "distance": d}
        for (qn, c), d in sorted(trace.distances.items(), key=lambda item: (item[1], item[0]))
    ]
    return {**graph_part, "columns": columns, "columnEdges": column_edges}
