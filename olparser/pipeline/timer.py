"""The timer's tick (`LineagePipeline.write_due`): the due runs written one by one (a failed one postponed, at most
MAX_DUE_ATTEMPTS times), deletions that did not finish retried, expired run states and old history purged."""

from __future__ import annotations

import logging
import threading
from typing import Callable

from olparser.history import RunHistoryStore
from olparser.runs import RunStateStore
from olparser.runs.rules import RunStatus

from .policy import DueReport, LineageOutcome
from .writing import Resolver, Uploader, finish_deleted

log = logging.getLogger(__name__)

DUE_RETRY_SECONDS = 60.0
MAX_DUE_ATTEMPTS = 5


def write_due(
    store: RunStateStore,
    uploader: Uploader,
    history: RunHistoryStore | None,
    locked: Callable[[str], threading.Lock],
    write_run: Callable[[str, float], LineageOutcome | None],
    *,
    now: float,
    limit: int,
    resolver: Resolver | None = None,
) -> DueReport:
    """Write the runs whose time has come (`write_run`, under the run's lock) and retry deletions that did not
    finish (then clean up after them as a commit's deletion does, `resolver` included). A failed run is tried again
    later, at most MAX_DUE_ATTEMPTS times."""
    outcomes: list[LineageOutcome] = []
    failed = 0
    for key in store.due_runs(now, limit):
        with locked(key):
            try:
                outcome = write_run(key, now)
            except Exception as exc:  # the next tick tries again; a run never blocks the others
                failed += 1
                attempts = store.postpone(key, now + DUE_RETRY_SECONDS * 2**failed)
                log.warning(
                    "timer: run %s could not be written (attempt %d of %d): %s",
                    key,
                    attempts,
                    MAX_DUE_ATTEMPTS,
                    type(exc).__name__,
                )
                if attempts >= MAX_DUE_ATTEMPTS:
                    log.error("timer: run %s given up after %d attempts", key, attempts)
                    store.schedule(key, None)
                continue
        if outcome is not None:
            outcomes.append(outcome)
    retried = retry_deletes(store, uploader, now, resolver)
    purged = store.purge_expired(now)
    history_purged = history.purge(now) if history is not None else 0
    written = sum(1 for o in outcomes if o.status == RunStatus.WRITTEN)
    return DueReport(
        written=written,
        failed=failed,
        deletes_retried=retried,
        purged=purged,
        outcomes=tuple(outcomes),
        history_purged=history_purged,
    )


def retry_deletes(store: RunStateStore, uploader: Uploader, now: float, resolver: Resolver | None = None) -> int:
    """Delete again the tombstoned entities whose deletion did not finish, then clean up after them
    (`finish_deleted`, as after a commit's deletion); how many were deleted."""
    keys = store.abandoned_deletes(now, limit=500)
    if not keys:
        return 0
    try:
        report = uploader.delete(keys)
    except Exception as exc:
        log.warning("timer: %d deletions failed again: %s", len(keys), type(exc).__name__)
        return 0
    finish_deleted(store, resolver, keys, report)
    return len(keys)
