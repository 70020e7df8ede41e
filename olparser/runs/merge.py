"""Merging the events of one run into a RunSnapshot: pure functions over plain data, no I/O.

openlineage-spark sends several cumulative events per run (START, RUNNING per Spark job, COMPLETE), sometimes twice,
sometimes out of order, sometimes without START; the Databricks `environment-properties` facet usually comes on
RUNNING only. The merger folds them into one snapshot whose value depends only on the set of events seen:

- inputs and outputs are unioned by (namespace, name), sorted by that pair;
- each facet (run, job, dataset, input/output) is taken from the newest event that carries it, an empty facet never
  replaces a non-empty one, and a facet missing from a later event is kept;
- the lifecycle state is the newest terminal one (COMPLETE, FAIL, ABORT) if any, else the newest of START/RUNNING,
  else OTHER; `event_time` is the newest eventTime; `start_time` the eventTime of the earliest START (of the earliest
  event when no START came); the job name is the newest non-empty one.

"Newest" compares eventTime as instants (any ISO 8601 offset or precision); equal instants fall back to the text and
then to the content, so that every tie is broken the same way whatever the arrival order. Only the facets the rest
of the pipeline reads are kept (KEPT_* below): logical plans and unknown vendor facets are dropped here.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Iterable

from olparser.jsontypes import JSON
from olparser.runs.model import TERMINAL_EVENT_TYPES, DatasetFacts, RunSnapshot

KEPT_RUN_FACETS = frozenset(
    {
        "environment-properties",  # Databricks: notebook path, job/run ids, cluster tags, mountPoints, user
        "parent",
        "processing_engine",
        "spark_version",  # before openlineage-spark 1.14 (replaced by processing_engine)
        "spark_applicationDetails",  # application id and name, user: the Spark application's identity
        "spark_properties",  # spark.app.name and the properties the user chose to capture
        "nominalTime",
        "errorMessage",
    }
)
KEPT_JOB_FACETS = frozenset(
    {"jobType", "sourceCodeLocation", "sql", "documentation", "ownership", "tags", "lineage"}
)  # lineage: which inputs each output derives from (olparser/lineage/edges.py)
KEPT_DATASET_FACETS = frozenset(
    {
        "schema",
        "symlinks",
        "columnLineage",
        "dataSource",
        "storage",
        "catalog",
        "version",
        "lifecycleStateChange",
        "documentation",
        "dataQualityMetrics",
        "datasetType",
        "lineage",  # temporary datasets, and declared sources (olparser/lineage/edges.py)
    }
)
KEPT_INPUT_FACETS = frozenset({"inputStatistics", "dataQualityMetrics"})  # inputs[].inputFacets
KEPT_OUTPUT_FACETS = frozenset({"outputStatistics"})  # outputs[].outputFacets
KEPT_IO_FACETS = KEPT_INPUT_FACETS | KEPT_OUTPUT_FACETS

LIFECYCLE_EVENT_TYPES = ("START", "RUNNING")
STATIC_EVENT_TYPE = "COMPLETE"  # static lineage (JobEvent / DatasetEvent) is a finished declaration

_OLDEST = datetime.min.replace(tzinfo=timezone.utc)


def is_static_event(event: JSON) -> bool:
    """True for a JobEvent or DatasetEvent (static lineage): an event without a run."""
    return "run" not in event


def merge_event(previous: RunSnapshot | None, event: JSON, *, max_datasets: int | None = None) -> RunSnapshot:
    """Fold one RunEvent into the snapshot of its run (None: the first event seen for that run).

    `max_datasets` bounds the run's inputs and its outputs (each): only the first that many in (namespace, name)
    order are kept and the snapshot is marked `truncated` — the same datasets whatever the order of the events."""
    run = event.get("run")
    if not isinstance(run, dict):
        run = {}
    run_id = run.get("runId")
    if not isinstance(run_id, str) or not run_id:
        raise ValueError("event has no run.runId: a static JobEvent/DatasetEvent goes to snapshot_from_static")
    if previous is not None and previous.run_id != run_id:
        raise ValueError(f"event of run {run_id} cannot be merged into run {previous.run_id}")
    base = previous or RunSnapshot(
        run_id=run_id, job_namespace="", job_name="", event_type="OTHER", event_time="", producer=""
    )
    return _fold(base, event, _event_type(event), run.get("facets"), max_datasets)


def snapshot_from_static(event: JSON, *, max_datasets: int | None = None) -> RunSnapshot:
    """The snapshot of static lineage: a JobEvent (job, inputs, outputs) or a DatasetEvent (one dataset).

    It has no run (run_id None) and is COMPLETE. A DatasetEvent has an empty job name and its dataset as the single
    output.
    """
    if not is_static_event(event):
        raise ValueError("event has a run: merge it with merge_event")
    if "job" not in event and not isinstance(event.get("dataset"), dict):
        raise ValueError("static event has neither 'job' (JobEvent) nor 'dataset' (DatasetEvent)")
    base = RunSnapshot(run_id=None, job_namespace="", job_name="", event_type="OTHER", event_time="", producer="")
    if "job" not in event:
        event = {**event, "outputs": [event["dataset"]]}
    return _fold(base, event, STATIC_EVENT_TYPE, None, max_datasets)


def _fold(base: RunSnapshot, event: JSON, event_type: str, run_facets: Any, max_datasets: int | None) -> RunSnapshot:
    time = event.get("eventTime")
    if not isinstance(time, str):
        time = ""
    times = base.merge_times
    job = event.get("job")
    if not isinstance(job, dict):
        job = {}

    producer = event.get("producer")
    if not isinstance(producer, str):
        producer = ""
    event_time, newest_producer = base.event_time, base.producer
    if not base.event_time or (_instant(time), time, producer) > (
        _instant(base.event_time),
        base.event_time,
        base.producer,
    ):
        event_time, newest_producer = time, producer

    start_time, start_from = base.start_time, times.get("start_from")
    if time and (not start_time or _start_key(event_type, time) < _start_key(start_from, start_time)):
        start_time, start_from = time, event_type if event_type == "START" else "event"

    state, state_time = base.event_type, times.get("state")
    if state_time is None or _state_key(event_type, time) > _state_key(state, state_time):
        state, state_time = event_type, time

    job_namespace, job_name, job_time = base.job_namespace, base.job_name, times.get("job")
    name, namespace = job.get("name"), job.get("namespace")
    if isinstance(name, str) and name and isinstance(namespace, str):
        if job_time is None or (_instant(time), time, namespace, name) > (
            _instant(job_time),
            job_time,
            job_namespace,
            job_name,
        ):
            job_namespace, job_name, job_time = namespace, name, time

    run_facets_merged, run_times = _merge_facets(
        base.run_facets, times.get("run_facets", {}), run_facets, KEPT_RUN_FACETS, time
    )
    job_facets_merged, job_times = _merge_facets(
        base.job_facets, times.get("job_facets", {}), job.get("facets"), KEPT_JOB_FACETS, time
    )
    merge_times: JSON = {"state": state_time, "run_facets": run_times, "job_facets": job_times}
    if job_time is not None:
        merge_times["job"] = job_time
    if start_from is not None:
        merge_times["start_from"] = start_from
    inputs, inputs_cut = _merge_datasets(base.inputs, event.get("inputs"), "inputFacets", time, max_datasets)
    outputs, outputs_cut = _merge_datasets(base.outputs, event.get("outputs"), "outputFacets", time, max_datasets)
    return RunSnapshot(
        run_id=base.run_id,
        job_namespace=job_namespace,
        job_name=job_name,
        event_type=state,
        event_time=event_time,
        producer=newest_producer,
        run_facets=run_facets_merged,
        job_facets=job_facets_merged,
        inputs=inputs,
        outputs=outputs,
        merge_times=merge_times,
        truncated=max_datasets if (inputs_cut or outputs_cut) and max_datasets else base.truncated,
        start_time=start_time,
    )


def _event_type(event: JSON) -> str:
    value = event.get("eventType")
    return value if value in TERMINAL_EVENT_TYPES or value in LIFECYCLE_EVENT_TYPES else "OTHER"


def _state_key(event_type: str, time: str) -> tuple[int, datetime, str, str]:
    rank = 2 if event_type in TERMINAL_EVENT_TYPES else 1 if event_type in LIFECYCLE_EVENT_TYPES else 0
    return rank, _instant(time), time, event_type


def _start_key(event_type: str | None, time: str) -> tuple[int, datetime, str]:
    """Orders the candidates for a run's start: a START before any other event, then the earliest instant."""
    return (0 if event_type == "START" else 1), _instant(time), time


def _merge_datasets(
    current: tuple[DatasetFacts, ...], incoming: Any, io_key: str, time: str, limit: int | None
) -> tuple[tuple[DatasetFacts, ...], bool]:
    """The union of `current` and `incoming` by (namespace, name), sorted, cut to `limit`; and whether it was cut."""
    if not isinstance(incoming, list) or not incoming:
        return current, False
    by_key = {(d.namespace, d.name): d for d in current}
    for dataset in incoming:
        if not isinstance(dataset, dict):
            continue
        namespace, name = dataset.get("namespace"), dataset.get("name")
        if not isinstance(namespace, str) or not isinstance(name, str):
            continue
        known = by_key.get((namespace, name)) or DatasetFacts(namespace=namespace, name=name)
        facets, facet_times = _merge_facets(
            known.facets, known.merge_times.get("facets", {}), dataset.get("facets"), KEPT_DATASET_FACETS, time
        )
        io_facets, io_times = _merge_facets(
            known.io_facets,
            known.merge_times.get("io_facets", {}),
            dataset.get(io_key),
            KEPT_INPUT_FACETS if io_key == "inputFacets" else KEPT_OUTPUT_FACETS,
            time,
        )
        by_key[(namespace, name)] = DatasetFacts(
            namespace=namespace,
            name=name,
            facets=facets,
            io_facets=io_facets,
            merge_times={"facets": facet_times, "io_facets": io_times},
        )
    keys = sorted(by_key)
    cut = limit is not None and len(keys) > limit
    return tuple(by_key[key] for key in (keys[:limit] if cut else keys)), cut


def _merge_facets(
    current: JSON, current_times: JSON, incoming: Any, kept: frozenset[str], time: str
) -> tuple[JSON, JSON]:
    """Facets of `current` updated with the kept facets of `incoming` (sent at `time`) that are newer."""
    if not isinstance(incoming, dict) or not incoming:
        return current, current_times
    facets, times = dict(current), dict(current_times)
    when = None
    for name, value in incoming.items():
        if name not in kept or not isinstance(value, dict):
            continue
        if name in facets:
            when = when or (_instant(time), time)
            if not _newer(value, when, facets[name], times.get(name, "")):
                continue
        facets[name], times[name] = value, time
    return facets, times


def _newer(value: JSON, when: tuple[datetime, str], other: JSON, other_time: str) -> bool:
    """Whether facet `value` sent at `when` (instant, text) replaces `other` sent at `other_time` (a total order:
    content first, then the instant, the time's text, the canonical JSON)."""
    has_content = _has_content(value)
    other_when = (_instant(other_time), other_time)
    if has_content and when > other_when:
        return True  # whatever `other` holds
    key, other_key = (has_content, *when), (_has_content(other), *other_when)
    if key != other_key:
        return key > other_key
    return _canonical(value) > _canonical(other)


def _has_content(facet: JSON) -> bool:
    """False for a facet that says nothing, such as `environment-properties: {}` on non-Databricks clusters."""
    for name, value in facet.items():
        if not name.startswith("_") and _is_filled(value):
            return True
    return False


def _is_filled(value: Any) -> bool:
    if isinstance(value, dict):
        for item in value.values():
            if _is_filled(item):
                return True
        return False
    return value is not None and value != "" and value != []


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


@lru_cache(maxsize=4096)
def _instant(text: str) -> datetime:
    """An eventTime as a UTC instant; text without an offset is UTC; unreadable text sorts first."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return _OLDEST
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def run_instant(snapshot: RunSnapshot) -> float | None:
    """The run's newest eventTime as Unix seconds, or None when it has none that can be read."""
    return instant_seconds(snapshot.event_time)


def run_start_instant(snapshot: RunSnapshot) -> float | None:
    """When the run started (`start_time`) as Unix seconds, or None when unknown."""
    return instant_seconds(snapshot.start_time)


def run_end_instant(snapshot: RunSnapshot) -> float | None:
    """When the run ended: the eventTime of the terminal event that set its state, as Unix seconds; None while it
    has no terminal event (it may still be running)."""
    return instant_seconds(snapshot.merge_times.get("state") or "") if snapshot.is_terminal else None


def instant_seconds(text: str) -> float | None:
    """An ISO 8601 time (UTC when it has no offset) as Unix seconds; None for empty or unreadable text."""
    if not text:
        return None
    moment = _instant(text)
    return None if moment == _OLDEST else moment.timestamp()


def merge_events(
    events: Iterable[JSON], previous: RunSnapshot | None = None, *, max_datasets: int | None = None
) -> RunSnapshot | None:
    """Fold several events of one run (a convenience for tests, tools and benchmarks)."""
    snapshot = previous
    for event in events:
        snapshot = merge_event(snapshot, event, max_datasets=max_datasets)
    return snapshot
