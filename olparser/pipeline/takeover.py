"""Take-over of session-specific identities: a notebook run (Fabric, Synapse) written under its stable identity has
the runs that wrote the same outputs through a session-specific process written again (olparser.lineage.identity)."""

from __future__ import annotations

import logging
from typing import Callable

from olparser.history import RunHistoryStore
from olparser.history.model import WRITE
from olparser.history.records import history_run_id
from olparser.history.window import Window
from olparser.lineage import LineageOptions
from olparser.lineage.identity import job_identity, legacy_writers
from olparser.runs import RunSnapshot

from .policy import LineageOutcome
from .reporting import ReportedOnce

log = logging.getLogger(__name__)

TAKE_OVER_ROWS = 200  # history rows read per output when a notebook process looks for its session-specific forms
TAKE_OVER_DAYS = 366  # how far back (run starts) it looks: beyond the run state's lifetime, whose runs it rewrites


def take_over(
    history: RunHistoryStore,
    options: LineageOptions,
    run: RunSnapshot,
    now: float,
    looked_for: ReportedOnce,
    write_again: Callable[[str, float], LineageOutcome],
) -> tuple[int, int]:
    """A notebook run (Fabric, Synapse) written under its stable identity takes over the processes earlier
    versions wrote for the same code under a session-specific owner (olparser.lineage.identity): the run
    history names the runs that wrote the same output through such a process, and each of them is written
    again (`write_again`) — its plan now has the stable process, so its commit releases the session-specific process
    and owner and the ledger deletes them once no run uses them, as a re-map does. Needs the run state of those runs
    (RUN_STATE_TTL_SECONDS); each stable process is looked up once per worker (`looked_for`). Returns the catalog
    calls and the entities deleted."""
    identity = job_identity(run.job_namespace, run.job_name, run.run_facets)
    if identity.legacy_app_key is None:
        return 0, 0
    record = history.run(history_run_id(run, options))
    if record is None:
        return 0, 0
    calls = deleted = 0
    window = Window(now - TAKE_OVER_DAYS * 86400.0, now + 1.0)
    for process in record.processes:
        if looked_for.seen(process.qualified_name):
            continue
        writes = [
            (access.process, access.run.run_id)
            for output in process.outputs
            for access in history.dataset_accesses(output.qualified_name, window, TAKE_OVER_ROWS, access=WRITE)
        ]
        legacy = legacy_writers(process.qualified_name, record.facts.owner, run.job_namespace, identity, writes)
        for legacy_key in legacy:
            done = write_again(legacy_key, now)
            calls, deleted = calls + done.catalog_calls, deleted + done.deleted
        if legacy:
            log.info(
                "process %s: took over the session-specific processes of %d earlier run(s)",
                process.qualified_name,
                len(legacy),
            )
        looked_for.first_time(process.qualified_name, True)
    return calls, deleted
