"""Merging the events of one run, and where the merged state lives between events.

model         RunSnapshot / DatasetFacts: what the entity builder receives
merge         merge_event, snapshot_from_static: pure folding of events into a snapshot
codec         RunSnapshot <-> compact JSON (and compressed bytes)
ledger        the ownership ledger: claim / commit / intentions / users / writers as pure rules
rules         run and static keys, run order, RunStatus: the run rules the live and Spark paths share
store         the RunStateStore interface and the RunSession a commit is given (the stores are adapters: olparser/adapters/run_state)
"""

from olparser.runs.merge import (
    is_static_event,
    merge_event,
    run_end_instant,
    run_instant,
    run_start_instant,
    snapshot_from_static,
)
from olparser.runs.model import DatasetFacts, RunSnapshot
from olparser.runs.store import RunSession, RunStateStore

__all__ = [
    "DatasetFacts",
    "RunSession",
    "RunSnapshot",
    "RunStateStore",
    "is_static_event",
    "merge_event",
    "run_end_instant",
    "run_instant",
    "run_start_instant",
    "snapshot_from_static",
]
