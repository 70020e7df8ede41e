"""The single-process runner: the backfill's steps in one Python process, no Spark (small histories, the bench's
baseline). Same functions, same order, same report as the Spark job (`tools/spark/spark_job.py`)."""
from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path
from typing import Iterator

from tqdm import tqdm

from .catalog import PlanWriter
from .job import (TALLY_KEY, BackfillJob, finish_writes, is_planned, keyed_records, planned_entities,
                  register_typedefs, write_dry_run)
from .records import bodies_in_file
from .report import BackfillReport, Tally, ranked_namespaces
from .runs import plan_run, reduce_facts, selected_plan
from .sources import local_files


def run_local(sources: list[str], job: BackfillJob, *, command: str = "backfill", dry_run: Path | None = None,
              progress: bool = False) -> BackfillReport:
    started = time.monotonic()
    files = local_files(sources, job.since, job.until)
    limit = job.limits().max_body_bytes

    def bodies() -> Iterator[bytes | Exception]:
        for path in tqdm(files, unit="file", disable=not progress, desc="reading"):
            yield from bodies_in_file(path.read_bytes(), limit)

    events: dict[str, list[bytes]] = defaultdict(list)
    tally = Tally()
    for key, value in keyed_records(job, bodies()):
        if key == TALLY_KEY:
            tally = tally.add(value)  # type: ignore[arg-type]
        else:
            events[key].append(value)  # type: ignore[arg-type]
    engine, options = job.engine(), job.options()
    results = [plan_run(key, values, engine, options) for key, values in events.items()]
    summary = reduce_facts(results)
    selected = [selected_plan(r, summary.winners, summary.versions) for r in results if is_planned(r)]
    report = BackfillReport(command, tally.add(summary.tally), processes_planned=len(summary.winners),
                            unmatched_namespaces=ranked_namespaces(summary.unmatched))
    if dry_run is not None:
        report.processes_superseded = sum(s.superseded for s in selected)
        entities = dict(pair for s in selected for pair in planned_entities(s))
        report.dry_run_entities = write_dry_run(dry_run, (entities[key] for key in sorted(entities)))
    else:
        client = job.client()
        calls = register_typedefs(client, job)
        finish_writes(report, client, job, PlanWriter(client, job.settings).write(selected), calls)
    report.seconds = time.monotonic() - started
    return report
