"""How the backfill spreads its files over tasks on local[2]: a few large files get a task each (so that both cores
work to the end), many small ones stay packed as Spark packs them, and the session's settings are left as found."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools.spark.spark_job import READ_TASK_BYTES, event_bodies

pytestmark = pytest.mark.spark

SETTING = "spark.sql.files.minPartitionNum"


def test_four_large_files_are_read_by_four_tasks(spark, tmp_path: Path) -> None:
    for n in range(4):  # incompressible, so each is one refusal: larger than the 1 MiB limit below
        (tmp_path / f"part-{n}.jsonl").write_bytes(os.urandom(READ_TASK_BYTES + 1024))
    before = spark.conf.get(SETTING, None)

    bodies = event_bodies(spark, [str(tmp_path)], 1 << 20)

    assert bodies.getNumPartitions() == 4  # Spark alone packs them two by two: one core idles when one pair is slow
    assert spark.conf.get(SETTING, None) == before
    assert bodies.map(_status).collect() == [413, 413, 413, 413]


def test_small_files_keep_the_usual_packing(spark, tmp_path: Path) -> None:
    for n in range(10):
        (tmp_path / f"{n}.json").write_text('{"eventType": "START"}', encoding="utf-8")

    bodies = event_bodies(spark, [str(tmp_path)], 1 << 20)

    assert bodies.getNumPartitions() == 2  # one per core, as Spark packs them (its open cost of 4 MB a file)
    assert bodies.count() == 10


def _status(body: object) -> int | None:
    return getattr(body, "status", None)
