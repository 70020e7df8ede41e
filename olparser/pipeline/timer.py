"""The timer's tick (`LineagePipeline.write_due`): the runner writes the store's due runs one by one; here, what a tick
does besides: a run that failed postponed (at most MAX_DUE_ATTEMPTS times), deletions that did not finish retried,
expired run states and old history purged."""

from __future__ import annotations

import logging

from olparser.history import RunHistoryStore
from olparser.runs import RunStateStore
from olparser.runs.rules import RunStatus

from .policy import DueReport, LineageOutcome
from .ports import Resolver, Uploader
from .writing import finish_deleted

log = logging.getLogger(__name__)

DUE_RETRY_SECONDS = 60.0
MAX_DUE_ATTEMPTS = 5


def postponed(store: RunStateStore, key: str, now: float, failed: int, error: Exception) -> None:
    """A due run that could not be written: tried again later (backing off with `failed`, the tick's failures so
    far), given up after MAX_DUE_ATTEMPTS."""
    attempts = store.postpone(key, now + DUE_RETRY_SECONDS * 2**failed)
    log.warning(
        "timer: run %s could not be written (attempt %d of %d): %s",
        key,
        attempts,
        MAX_DUE_ATTEMPTS,
        type(error).__name__,
    )
    if attempts >= MAX_DUE_ATTEMPTS:
        log.error("timer: run %s given up after %d attempts", key, attempts)
        store.schedule(key, None)


def finish_tick(
    store: RunStateStore,
    uploader: Uploader,
    history: RunHistoryStore | None,
    outcomes: list[LineageOutcome],
    failed: int,
    now: float,
    resolver: Resolver | None = None,
) -> DueReport:
    """After the due runs (written by the caller): deletions that did not finish retried (then cleaned up after as
    a commit's deletion is, `resolver` included), expired run states and old history purged; the tick's report."""
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
