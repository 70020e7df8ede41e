"""A pipeline over a fake catalog, and the constants and column-lineage inputs the pipeline tests share."""

from __future__ import annotations

import json
from pathlib import Path

from olparser.lineage import LineageOptions
from olparser.pipeline import LineagePipeline, WritePolicy
from tests.support import databricks_runs as dr

NOW = 1_800_000_000.0


CLL = "openlineage/sequences/compat-tests__CLL"


WS = f"databricks://{dr.HOST}"


NOTEBOOK = f"{WS}/notebooks/Repos/etl/orders"


STATEMENT = "execute_insert_into_hadoop_fs_relation_command.orders"


class Clock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def make_pipeline(store, engine, catalog, clock=None, resolver=None, takeovers=None, **policy) -> LineagePipeline:
    clock = clock or Clock()
    return LineagePipeline(
        store,
        engine,
        LineageOptions(),
        catalog,
        WritePolicy(**{"environment_wait_seconds": 0, **policy}),
        clock=clock,
        sleep=clock.sleep,
        resolver=resolver,
        takeovers=takeovers,
    )


def _cll(shared_dir: Path, *numbers: int) -> list[dict]:
    return [json.loads((shared_dir / CLL / f"{n}.json").read_text()) for n in numbers]
