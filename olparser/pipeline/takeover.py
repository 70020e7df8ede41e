"""Take-over of session-specific identities: a notebook run (Fabric, Synapse) written under its stable identity has
the runs that wrote the same outputs through a session-specific process written again (olparser.lineage.identity)."""

from __future__ import annotations

import logging
from typing import Iterator

from olparser.history import RunHistoryStore
from olparser.history.model import WRITE
from olparser.history.records import history_run_id
from olparser.history.window import Window
from olparser.lineage import LineageOptions
from olparser.lineage.identity import job_identity, legacy_writers
from olparser.runs import RunSnapshot

from .reporting import ReportedOnce

log = logging.getLogger(__name__)

TAKE_OVER_ROWS = 200  # history rows read per output when a notebook process looks for its session-specific forms
TAKE_OVER_DAYS = 366  # how far back (run starts) it looks: beyond the run state's lifetime, whose runs it rewrites


def session_specific_writers(
    history: RunHistoryStore,
    options: LineageOptions,
    run: RunSnapshot,
    now: float,
    looked_for: ReportedOnce,
) -> Iterator[tuple[str, list[str]]]:
    """A notebook run (Fabric, Synapse) written under its stable identity takes over the processes earlier
    versions wrote for the same code under a session-specific owner (olparser.lineage.identity): the run
    history names the runs that wrote the same output through such a process. Yields, per process of the run not
    looked up yet by this worker (`looked_for`), those runs: the caller writes each again — its plan now has the
    stable process, so its commit releases the session-specific process and owner and the ledger deletes them once
    no run uses them, as a re-map does — then calls `taken_over`. Needs the run state of those runs
    (RUN_STATE_TTL_SECONDS)."""
    identity = job_identity(run.job_namespace, run.job_name, run.run_facets)
    if identity.legacy_app_key is None:
        return
    record = history.run(history_run_id(run, options))
    if record is None:
        return
    window = Window(now - TAKE_OVER_DAYS * 86400.0, now + 1.0)
    for process in record.processes:
        if looked_for.seen(process.qualified_name):
            continue
        writes = [
            (access.process, access.run.run_id)
            for output in process.outputs
            for access in history.dataset_accesses(output.qualified_name, window, TAKE_OVER_ROWS, access=WRITE)
        ]
        yield (
            process.qualified_name,
            legacy_writers(process.qualified_name, record.facts.owner, run.job_namespace, identity, writes),
        )


def taken_over(process: str, legacy: list[str], looked_for: ReportedOnce) -> None:
    """The runs `session_specific_writers` yielded for `process` are written again: it is not looked up again."""
    if legacy:
        log.info("process %s: took over the session-specific processes of %d earlier run(s)", process, len(legacy))
    looked_for.first_time(process, True)
