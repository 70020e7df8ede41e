"""The single-process runner: the backfill's steps in one Python process, no Spark (small histories, the bench's
baseline). Same functions, same order, same report as the Spark job (`tools/spark/spark_job.py`)."""

from __future__ import annotations

import pickle
import time
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterator

from tqdm import tqdm

from .catalog import PlanWriter
from .job import (
    TALLY_KEY,
    BackfillJob,
    finish_writes,
    is_planned,
    keyed_records,
    planned_entities,
    record_history,
    register_typedefs,
    relink_history,
    write_dry_run,
)
from .records import bodies_in_path
from .report import BackfillReport, Tally, ranked_namespaces
from .runs import DEFERRED, FactReducer, RunResult, plan_run, replan, selected_plan
from .sources import local_files


def run_local(
    sources: list[str],
    job: BackfillJob,
    *,
    command: str = "backfill",
    dry_run: Path | None = None,
    progress: bool = False,
) -> BackfillReport:
    started = time.monotonic()
    files = local_files(sources, job.since, job.until)
    limit = job.limits().max_body_bytes

    def bodies() -> Iterator[bytes | Exception]:
        for path in tqdm(files, unit="file", disable=not progress, desc="reading"):
            yield from bodies_in_path(path, limit)

    events: dict[str, list[bytes]] = defaultdict(list)
    tally = Tally()
    for key, value in keyed_records(job, bodies()):
        if key == TALLY_KEY:
            # Why the type error is ignored: keyed_records gives the Tally under TALLY_KEY, compressed events under run keys
            tally = tally.add(value)  # type: ignore[arg-type]
        else:
            # Why the type error is ignored: keyed_records gives the Tally under TALLY_KEY, compressed events under run keys
            events[key].append(value)  # type: ignore[arg-type]
    engine, options, parse_sql = job.engine(), job.options(), job.sql_parser()
    reducer = FactReducer()
    planned: list[bytes] = []  # each planned run pickled and compressed until its plan is selected
    records = []
    deferred = []  # runs that read temporary datasets: planned once every writer is known

    def keep(result: RunResult) -> None:
        reducer.add(result)
        if result.status == DEFERRED:
            deferred.append(result)
            return
        if result.record is not None:
            records.append(result.record)
        if is_planned(result):
            planned.append(zlib.compress(pickle.dumps(result, pickle.HIGHEST_PROTOCOL), 1))

    for key in list(events):
        keep(plan_run(key, events.pop(key), engine, options, parse_sql, job.policy()))
    temporary = reducer.summary().temporary if deferred else {}
    for result in deferred:
        keep(replan(result, temporary, engine, options, parse_sql, job.policy()))
    summary = reducer.summary()
    selected = (
        selected_plan(pickle.loads(zlib.decompress(data)), summary.winners, summary.versions) for data in planned
    )
    report = BackfillReport(
        command,
        tally.add(summary.tally),
        processes_planned=len(summary.winners),
        unmatched_namespaces=ranked_namespaces(summary.unmatched),
    )
    if dry_run is not None:
        entities: dict[Any, Any] = {}
        for choice in selected:
            report.processes_superseded += choice.superseded
            entities.update(planned_entities(choice))
        report.dry_run_entities = write_dry_run(dry_run, (entities[key] for key in sorted(entities)))
    else:
        report.runs_recorded = record_history(job, records)  # before the writes read the run counts
        client = job.client()
        calls = register_typedefs(client, job)
        history, run_state = job.history(), job.run_state()
        try:
            writer = PlanWriter.build(client, job.settings, registry=run_state, history=history)
            stats = writer.write(selected)
            finish_writes(report, client, job, stats, calls)
            relink_history(job, records, stats.links)
        finally:
            history.close()
            run_state.close()  # type: ignore[attr-defined]  # both stores close; the RunStateStore protocol omits it
    report.seconds = time.monotonic() - started
    return report
