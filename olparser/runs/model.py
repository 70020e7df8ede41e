"""What the run merger hands to the entity builder: one run, merged from all its events, as plain data."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]

TERMINAL_EVENT_TYPES = ("COMPLETE", "FAIL", "ABORT")


@dataclass(frozen=True)
class DatasetFacts:
    """One input or output dataset of a run, with the facets the connector uses (merged across events)."""

    namespace: str
    name: str
    facets: JSON = field(default_factory=dict)  # dataset facets: schema, symlinks, columnLineage, dataSource, storage...
    io_facets: JSON = field(default_factory=dict)  # inputFacets / outputFacets (statistics...), if kept


@dataclass(frozen=True)
class RunSnapshot:
    """A run as known after merging every event seen for its runId (or a static DatasetEvent/JobEvent)."""

    run_id: str | None  # None for static lineage (JobEvent / DatasetEvent)
    job_namespace: str
    job_name: str
    event_type: str  # lifecycle state after merging: START, RUNNING, COMPLETE, FAIL, ABORT, OTHER
    event_time: str  # the newest eventTime seen (ISO 8601 text, as sent)
    producer: str
    run_facets: JSON = field(default_factory=dict)  # environment-properties, parent, processing_engine, ...
    job_facets: JSON = field(default_factory=dict)  # jobType, sourceCodeLocation, sql, ...
    inputs: tuple[DatasetFacts, ...] = ()
    outputs: tuple[DatasetFacts, ...] = ()

    @property
    def is_terminal(self) -> bool:
        return self.event_type in TERMINAL_EVENT_TYPES
