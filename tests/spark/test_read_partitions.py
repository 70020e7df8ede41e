"""How the backfill reads its files on local[2]: a few large files get a task each (so that both cores work to the
end), many small ones stay packed as Spark packs them, and the session's settings are left as found; local files are
read by the Python workers themselves, with the same outcome as Spark's own read."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from tests.support.spark_jobs import job_for
from tools.spark import spark_job
from tools.spark.spark_job import READ_TASK_BYTES, _balanced_bins, _shared_files, event_bodies, local_event_bodies

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


def test_local_files_read_by_the_workers_give_the_bodies_spark_reads(spark, tmp_path: Path) -> None:
    """On a local master the Python workers read local files themselves; what they find is what Spark's own read
    (the path for cluster storage and files over LARGE_FILE_BYTES) finds: lines, documents, arrays, refusals."""
    lines = b"".join(b'{"eventType": "START", "n": %d}\n' % n for n in range(5))
    (tmp_path / "lines.jsonl.gz").write_bytes(gzip.compress(lines))
    (tmp_path / "one.json").write_bytes(b'{"eventType": "COMPLETE"}')
    (tmp_path / "array.json").write_bytes(b'[{"a": 1}, {"b": 2}]')
    (tmp_path / "broken.json.gz").write_bytes(b"\x1f\x8b not gzip")
    (tmp_path / "big.jsonl").write_bytes(b'{"x": "' + b"y" * 2048 + b'"}\n')
    (tmp_path / ".hidden.json").write_bytes(b'{"hidden": true}')
    job = job_for(None)

    local = local_event_bodies(spark.sparkContext, [str(tmp_path)], job, 1024)
    read_by_spark = event_bodies(spark, [str(tmp_path)], 1024)

    assert local is not None
    found = sorted(local.map(_outcome).collect(), key=repr)
    assert found == sorted(read_by_spark.map(_outcome).collect(), key=repr)
    assert found == sorted(
        [
            *(b'{"eventType": "START", "n": %d}' % n for n in range(5)),
            b'{"eventType": "COMPLETE"}',
            b'{"a":1}',
            b'{"b":2}',
            "400",
            "413",
        ],
        key=repr,
    )  # array elements re-encoded


def test_spark_reads_what_the_workers_cannot(spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "one.json").write_bytes(b'{"eventType": "COMPLETE"}')
    job = job_for(None)
    sc = spark.sparkContext
    assert local_event_bodies(sc, ["abfss://c@account.dfs.core.windows.net/events"], job, 1024) is None
    assert local_event_bodies(sc, [str(tmp_path / "missing")], job, 1024) is None  # Spark's read names it
    monkeypatch.setattr(spark_job, "LARGE_FILE_BYTES", 10)
    assert local_event_bodies(sc, [str(tmp_path)], job, 1024) is None


def test_files_are_dealt_into_bins_of_about_equal_size() -> None:
    files = [Path(f"f{n}") for n in range(6)]
    bins = _balanced_bins(files, [50, 40, 30, 20, 10, 10], 3)
    assert bins == [["f0", "f5"], ["f1", "f4"], ["f2", "f3"]]  # 60, 50, 50
    assert _balanced_bins(files[:2], [5, 5], 4) == [["f0"], ["f1"]]


def test_one_big_file_is_parsed_by_every_core_each_body_once(spark, tmp_path: Path) -> None:
    """A single gzip JSON-lines file (the OpenLineage file transport's, an Event Hubs capture export) cannot be split
    by bytes: on local[2] two tasks read it, each decompresses it and keeps every other line, so the parsing after
    the read runs on both cores; together they give every body once, refusals included."""
    lines = b"".join(b'{"eventType": "START", "n": %d}\n' % n for n in range(7)) + b'{"x": "' + b"y" * 2048 + b'"}\n'
    (tmp_path / "events.jsonl.gz").write_bytes(gzip.compress(lines))
    sc = spark.sparkContext
    local = local_event_bodies(sc, [str(tmp_path)], job_for(None), 1024)

    assert local is not None and sc.defaultParallelism == 2
    shares = local.glom().map(lambda bodies: sorted(map(_outcome, bodies), key=repr)).collect()
    odd = sorted([*(b'{"eventType": "START", "n": %d}' % n for n in (1, 3, 5)), "413"], key=repr)  # 413: line 7
    assert sorted(shares, key=repr) == [odd, [b'{"eventType": "START", "n": %d}' % n for n in (0, 2, 4, 6)]]


def test_the_lines_of_one_large_gzip_file_spark_reads_go_to_every_core(
    spark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over LARGE_FILE_BYTES (and from cluster storage) Spark reads the file as text lines; a gzip file is one
    partition, so its lines are spread over the cores before they are parsed."""
    lines = b"".join(b'{"eventType": "START", "n": %d}\n' % n for n in range(40))
    (tmp_path / "events.jsonl.gz").write_bytes(gzip.compress(lines))
    monkeypatch.setattr(spark_job, "LARGE_FILE_BYTES", 10)
    bodies = event_bodies(spark, [str(tmp_path)], 1024)
    sizes = bodies.glom().map(len).collect()
    assert len([size for size in sizes if size]) == 2 and sum(sizes) == 40
    assert sorted(bodies.collect()) == sorted(b'{"eventType": "START", "n": %d}' % n for n in range(40))


def test_a_file_larger_than_a_cores_share_is_read_by_several_tasks() -> None:
    files = [Path("big"), Path("small")]
    assert _shared_files(files, [900, 100], 2) == ([("big", 0, 2), ("big", 1, 2), ("small", 0, 1)], [450, 450, 100])
    assert _shared_files(files, [500, 500], 2)[0] == [("big", 0, 1), ("small", 0, 1)]  # a folder: as before
    assert _shared_files([Path("one")], [10], 4)[0] == [("one", n, 4) for n in range(4)]


def _outcome(body: object) -> object:
    status = getattr(body, "status", None)
    if status is None:
        return body  # the body's bytes; JSON lines may come back with their line ending stripped either way
    return str(status)
