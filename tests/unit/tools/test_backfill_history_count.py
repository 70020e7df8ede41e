"""`spark backfill`'s report counts the runs the history kept (issue 36: "history: runs recorded 11" when the history,
keeping RUN_HISTORY_DAYS, recorded 1 of 11 runs dated two years back)."""

from olparser.settings import Settings
from tests.support.history_records import DAY, T0, record
from tests.support.rules import MAPPINGS_PATH
from tools.spark.job import BackfillJob, record_history


def test_only_runs_within_the_retention_are_counted(tmp_path):
    job = BackfillJob.create(Settings(mappings_path=MAPPINGS_PATH, data_dir=tmp_path, run_history_days=30))
    records = [record(f"old-{n}", T0 - 400 * DAY + n, T0 - 400 * DAY + n + 60) for n in range(10)]
    records.append(record("recent", T0 - DAY, T0 - DAY + 60))
    assert record_history(job, records, now=T0) == 1
    history = job.history()
    try:
        assert (history.run("recent").run_id, history.run("old-0")) == ("recent", None)
    finally:
        history.close()
