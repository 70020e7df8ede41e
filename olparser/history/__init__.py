"""The run history: every run's dataset accesses over time, and lineage in a time window.

model          RunRecord, RunFacts, ProcessRun, Access: what the history holds (plain data)
records        history_record (plan + run -> record) and with_run_history (runCount, firstRunTime on a plan)
window         lineage_in_window: the breadth-first walk over a HistoryReader for a time window
api            the endpoints' answers: query parameters -> (status, JSON)
store          the RunHistoryStore interface and what the stores share (the stores are adapters:
               olparser/adapters/history_stores)
"""

from olparser.history.model import Access, DatasetRef, ProcessRun, ProcessSummary, RunFacts, RunRecord
from olparser.history.records import history_record, relink_record, with_run_history
from olparser.history.store import RunHistoryStore
from olparser.history.window import HistoryReader, WalkLimits, Window, lineage_in_window

__all__ = [
    "Access",
    "DatasetRef",
    "HistoryReader",
    "ProcessRun",
    "ProcessSummary",
    "RunFacts",
    "RunHistoryStore",
    "RunRecord",
    "WalkLimits",
    "Window",
    "history_record",
    "lineage_in_window",
    "relink_record",
    "with_run_history",
]
