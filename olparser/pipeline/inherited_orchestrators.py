"""The run-state side of inherited orchestrators (olparser/lineage/inherited.py), for the runner: an application run
records the parent and root it passes on to its SQL jobs, a SQL job looks them up — through the run-state store's
channel for temporary datasets (`record_temporary`, `temporary_sources`), so both stores (SQLite, Azure Tables)
answer alike and whichever run comes first, the other finds it: the SQL jobs written before their application's
parent was known are the readers `record_passed_orchestration` answers, which the runner writes again (as it writes
again the readers of a temporary dataset). Bounded as that channel is: at most MAX_TEMPORARY_ROWS readers answered
per record, remembered TEMPORARY_DATASET_SECONDS after the application run's last event."""

from __future__ import annotations

from olparser.lineage.identity import Orchestration
from olparser.lineage.inherited import CHANNEL, inherited_orchestration, inheriting_scope, passed_orchestration
from olparser.runs import RunSnapshot, RunStateStore


def record_passed_orchestration(store: RunStateStore, key: str, run: RunSnapshot, now: float) -> frozenset[str]:
    """An application run that an Airflow task ran records its parent and root; the runs that looked them up
    before (to be written again). Nothing for any other run."""
    passed = passed_orchestration(run)
    if passed is None:
        return frozenset()
    scope, data = passed
    return store.record_temporary(scope, key, {CHANNEL: data}, now=now)


def look_up_orchestration(store: RunStateStore, run: RunSnapshot, now: float) -> Orchestration | None:
    """The parent and root the run's application passed on (the run is noted as their reader first, so that an
    application run recorded afterwards answers it); None when the run needs none or nothing is known yet."""
    scope = inheriting_scope(run)
    if scope is None or run.run_id is None:
        return None
    found = store.temporary_sources(scope, [CHANNEL], run.run_id, now=now)
    return inherited_orchestration(found.get(CHANNEL, ()))
