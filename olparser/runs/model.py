"""What the run merger hands to the entity builder: one run, merged from all its events, as plain data."""

from __future__ import annotations

from dataclasses import dataclass, field

from olparser.jsontypes import JSON

TERMINAL_EVENT_TYPES = ("COMPLETE", "FAIL", "ABORT")


@dataclass(frozen=True)
class DatasetFacts:
    """One input or output dataset of a run, with the facets the connector uses (merged across events)."""

    namespace: str
    name: str
    facets: JSON = field(
        default_factory=dict
    )  # dataset facets: schema, symlinks, columnLineage, dataSource, storage...
    io_facets: JSON = field(default_factory=dict)  # inputFacets / outputFacets (statistics...), if kept
    # The eventTime each facet came from, so that merging does not depend on arrival order:
    # {"facets": {facet name: eventTime}, "io_facets": {facet name: eventTime}}. Bookkeeping of the merger only.
    merge_times: JSON = field(default_factory=dict)


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
    # The eventTime each part came from, so that merging does not depend on arrival order: {"state": eventTime of
    # the event that set event_type, "job": of the job name, "run_facets": {name: eventTime}, "job_facets": {...}}.
    # Bookkeeping of the merger only.
    merge_times: JSON = field(default_factory=dict)
    # 0, or the per-run limit on inputs (and on outputs) when the run named more: only the first that many (in
    # (namespace, name) order) are kept, whatever the order in which events arrived.
    truncated: int = 0
    # When the run started (ISO 8601 text, as sent): the eventTime of its earliest START event, or of its earliest
    # event when no START was seen ("" for static lineage without eventTime). Order-independent like the rest.
    start_time: str = ""

    @property
    def is_static(self) -> bool:
        """True for static lineage (a JobEvent or DatasetEvent), which belongs to no run."""
        return self.run_id is None

    @property
    def is_terminal(self) -> bool:
        return self.event_type in TERMINAL_EVENT_TYPES
