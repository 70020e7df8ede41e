"""What the run history holds, as plain data: one `RunRecord` per run, one `Access` per dataset a run read or wrote.

A record is what the run's plan wrote (its processes' inputs and outputs, as written) plus the run's facts (id, job,
owner, start and end, final status, system metadata summary). Every field is derived from the merged run, so a
replay or a retry yields the same record, and a run whose start or status became known later yields a record that
replaces its old one. Times are Unix seconds; `end` is None while the run has no terminal event (an INCOMPLETE run,
which may still be running).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterator

from olparser.jsontypes import JSON

READ, WRITE = "read", "write"
STATUSES = ("COMPLETE", "FAIL", "ABORT", "INCOMPLETE")


@dataclass(frozen=True, order=True)
class DatasetRef:
    qualified_name: str
    type_name: str


@dataclass(frozen=True)
class RunFacts:
    """What every record of a run carries."""

    run_id: str
    job: str  # {job namespace}/{job name}
    owner: str  # qualifiedName of the notebook, job task or Spark application that ran it
    owner_type: str
    start: float
    end: float | None
    status: str  # COMPLETE | FAIL | ABORT | INCOMPLETE
    metadata: JSON = field(default_factory=dict)  # system metadata summary (lineage.metadata)

    @property
    def duration_ms(self) -> int | None:
        return round((self.end - self.start) * 1000) if self.end is not None and self.end >= self.start else None


@dataclass(frozen=True)
class ProcessRun:
    """One process of one run, as the run's plan wrote it."""

    qualified_name: str
    type_name: str
    name: str
    inputs: tuple[DatasetRef, ...]
    outputs: tuple[DatasetRef, ...]
    column_mapping: str = ""
    column_lineage_detail: str = ""


@dataclass(frozen=True)
class Access:
    """One dataset access of one run (CDAP's lineage row): read or write, through which process."""

    dataset: DatasetRef
    access: str  # read | write
    process: str
    process_type: str
    run: RunFacts


@dataclass(frozen=True)
class RunRecord:
    facts: RunFacts
    processes: tuple[ProcessRun, ...]

    @property
    def run_id(self) -> str:
        return self.facts.run_id

    def accesses(self) -> Iterator[Access]:
        """Every (dataset, access, process) of the run, once."""
        seen: set[tuple[str, str, str]] = set()
        for process in self.processes:
            for access, datasets in ((READ, process.inputs), (WRITE, process.outputs)):
                for dataset in datasets:
                    key = (dataset.qualified_name, access, process.qualified_name)
                    if key not in seen:
                        seen.add(key)
                        yield Access(dataset, access, process.qualified_name, process.type_name, self.facts)

    def to_json(self) -> JSON:
        return {"facts": facts_to_json(self.facts), "processes": [process_to_json(p) for p in self.processes]}

    @classmethod
    def from_json(cls, document: JSON) -> "RunRecord":
        return cls(
            facts_from_json(document["facts"]), tuple(process_from_json(p) for p in document.get("processes") or ())
        )

    def canonical(self) -> str:
        """Compact JSON with sorted keys: equal records give equal text (the stores' digest of what they hold)."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class ProcessSummary:
    """What the history knows of a process: how many runs it holds and when the earliest started."""

    run_count: int
    first_start: float | None


def facts_to_json(facts: RunFacts) -> JSON:
    return {
        "runId": facts.run_id,
        "job": facts.job,
        "owner": facts.owner,
        "ownerType": facts.owner_type,
        "start": facts.start,
        "end": facts.end,
        "status": facts.status,
        "metadata": facts.metadata,
    }


def facts_from_json(document: JSON) -> RunFacts:
    return RunFacts(
        run_id=document["runId"],
        job=document.get("job", ""),
        owner=document.get("owner", ""),
        owner_type=document.get("ownerType", ""),
        start=float(document["start"]),
        end=None if document.get("end") is None else float(document["end"]),
        status=document.get("status", ""),
        metadata=document.get("metadata") or {},
    )


def _refs_to_json(refs: tuple[DatasetRef, ...]) -> list[list[str]]:
    return [[r.qualified_name, r.type_name] for r in refs]


def _refs_from_json(items: Any) -> tuple[DatasetRef, ...]:
    return tuple(DatasetRef(str(qn), str(t)) for qn, t in items or ())


def process_to_json(process: ProcessRun) -> JSON:
    document: JSON = {
        "qualifiedName": process.qualified_name,
        "typeName": process.type_name,
        "name": process.name,
        "inputs": _refs_to_json(process.inputs),
        "outputs": _refs_to_json(process.outputs),
    }
    if process.column_mapping:
        document["columnMapping"] = process.column_mapping
    if process.column_lineage_detail:
        document["columnLineageDetail"] = process.column_lineage_detail
    return document


def process_from_json(document: JSON) -> ProcessRun:
    return ProcessRun(
        qualified_name=document["qualifiedName"],
        type_name=document.get("typeName", ""),
        name=document.get("name", ""),
        inputs=_refs_from_json(document.get("inputs")),
        outputs=_refs_from_json(document.get("outputs")),
        column_mapping=document.get("columnMapping", ""),
        column_lineage_detail=document.get("columnLineageDetail", ""),
    )
