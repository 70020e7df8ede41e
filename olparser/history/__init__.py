"""The run history: every run's dataset accesses over time, and lineage in a time window.

  model          RunRecord, RunFacts, ProcessRun, Access: what the history holds (plain data)
  records        history_record (plan + run -> record) and with_run_history (runCount, firstRunTime on a plan)
  window         lineage_in_window: the breadth-first walk over a HistoryReader for a time window
  api            the endpoints' answers: query parameters -> (status, JSON)
  store          the RunHistoryStore interface, what the stores share, open_history_store(settings)
  stores/        SqliteHistoryStore (local file), TableHistoryStore (Azure Table storage)
"""
from olparser.history.model import Access, DatasetRef, ProcessRun, ProcessSummary, RunFacts, RunRecord
from olparser.history.records import history_record, relink_record, with_run_history
from olparser.history.store import RunHistoryStore, open_history_store
from olparser.history.window import HistoryReader, Window, WalkLimits, lineage_in_window

__all__ = ["Access", "DatasetRef", "HistoryReader", "ProcessRun", "ProcessSummary", "RunFacts", "RunHistoryStore",
           "RunRecord", "WalkLimits", "Window", "history_record", "lineage_in_window", "open_history_store",
           "relink_record", "with_run_history"]
