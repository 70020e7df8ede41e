"""The single-process runner: the backfill's steps in one Python process, no Spark (small histories, the bench's
baseline). Same functions, same order, same report as the Spark job (`tools/spark/spark_job.py`)."""
from __future__ import annotations

import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Iterator

from tqdm import tqdm

from .catalog import PlanWriter, WriteStats
from .job import (TALLY_KEY, BackfillJob, is_planned, keyed_records, planned_entities, register_typedefs,
                  remove_unused_placeholders, run_tally, write_dry_run)
from .records import bodies_in_file
from .report import BackfillReport, Tally, ranked_namespaces
from .runs import RunResult, entity_claims, newer_version, newest_claim, plan_run, process_claims, selected_plan
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
    for result in results:
        tally = tally.add(run_tally(result))

    winners: dict[str, tuple[float, str]] = {}
    for name, order in (claim for result in results for claim in process_claims(result)):
        winners[name] = newest_claim(winners[name], order) if name in winners else order
    versions = _shared_versions(results)
    winner_keys = {name: order[1] for name, order in winners.items()}
    selected = [selected_plan(r, winner_keys, versions) for r in results if is_planned(r)]

    unmatched = Counter(namespace for namespace, _ in {p for r in results for p in r.unmatched})
    report = BackfillReport(command, tally, processes_planned=len(winners),
                            unmatched_namespaces=ranked_namespaces(unmatched))
    report.processes_superseded = sum(s.superseded for s in selected)
    if dry_run is not None:
        entities = dict(pair for s in selected for pair in planned_entities(s))
        report.dry_run_entities = write_dry_run(dry_run, (entities[key] for key in sorted(entities)))
    else:
        client = job.client()
        calls = register_typedefs(client, job)
        stats: WriteStats = PlanWriter(client, job.settings).write(selected)
        report.count_writes(stats, calls)
        if command == "remap":
            report.placeholders_removed, remap_calls = remove_unused_placeholders(client, job, stats.placeholders)
            report.catalog_calls += remap_calls
    report.seconds = time.monotonic() - started
    return report


def _shared_versions(results: list[RunResult]) -> dict:
    newest: dict = {}
    for key, version in (claim for result in results for claim in entity_claims(result)):
        newest[key] = newer_version(newest[key], version) if key in newest else version
    return {key: version.entity for key, version in newest.items() if version.differs}

