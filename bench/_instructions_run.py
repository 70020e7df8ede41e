"""The workload `bench/instructions.py` counts under valgrind: `python -m bench._instructions_run N` processes two
warm-up runs, then N Databricks notebook runs (bench/merge.py's: START, RUNNING, COMPLETE with 30 columns of lineage)
through the live runner: SQLite run state and run history in a temporary folder, the one rule file, a catalog that
accepts every upload at once (bench/ledger.py's NullCatalog: what is counted is the connector's own work).
`python -m bench._instructions_run N floor`: the floor instead, `json.loads` of the same COMPLETE event's text N times.
"""

from __future__ import annotations

import json
import sys
import tempfile
import uuid
from pathlib import Path

from bench import MAPPINGS_PATH
from bench.ledger import WORKSPACE_HOSTS, NullCatalog
from bench.merge import databricks_run
from olparser.adapters.history_stores.sqlite_store import SqliteHistoryStore
from olparser.adapters.run_state.sqlite_store import SqliteRunStateStore
from olparser.lineage import LineageOptions
from olparser.naming import MappingEngine
from olparser.pipeline import LineagePipeline, WritePolicy
from olparser.runs.merge import instant_seconds

WARM_UP = 2


def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteRunStateStore(Path(folder) / "runs.sqlite3", ttl_seconds=30 * 86400)
        history = SqliteHistoryStore(Path(folder) / "history.sqlite3", retention_days=36500)
        pipeline = LineagePipeline(
            store,
            MappingEngine.from_path(MAPPINGS_PATH),
            LineageOptions(workspace_hosts=tuple(WORKSPACE_HOSTS.items())),
            NullCatalog(),
            WritePolicy(environment_wait_seconds=0),
            history=history,
        )
        for number in range(WARM_UP + runs):
            for event in databricks_run(str(uuid.UUID(int=number + 1))):
                pipeline.process(event, now=instant_seconds(event["eventTime"]) + 1)
        store.close()
        history.close()


def floor(events: int) -> None:
    text = json.dumps(databricks_run(str(uuid.UUID(int=1)))[-1])
    for _ in range(events):
        json.loads(text)


if __name__ == "__main__":
    (floor if sys.argv[2:] == ["floor"] else main)(int(sys.argv[1]))
