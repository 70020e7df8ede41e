"""Class Data Sharing for local sessions (tools/spark/class_sharing.py): the options a local JVM gets, and from the
command line, the first local run writing the archive into the cache folder and the next one mapping it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.spark.events import spark_run, write_json_lines
from tests.support.repository import PROJECT_ROOT
from tools.spark import class_sharing

QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


def test_a_jvm_writes_the_archive_into_a_file_of_its_own_then_every_jvm_maps_it(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    archive = class_sharing.archive_path()
    assert archive is not None and archive.parent == tmp_path / "cache" / "ol2purview"
    assert archive.name.startswith("spark-classes-") and archive.suffix == ".jsa"

    assert class_sharing.java_options(write=False) == ""
    assert class_sharing.java_options(write=True) == (
        f"-XX:ArchiveClassesAtExit={archive.parent}/{archive.stem}.{os.getpid()}.tmp {QUIET}"
    )
    archive.write_bytes(b"archive")
    assert class_sharing.java_options(write=False) == f"-XX:SharedArchiveFile={archive} {QUIET}"


def test_no_archive_where_a_jvm_option_cannot_hold_the_path(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "my cache"))
    assert (class_sharing.archive_path(), class_sharing.java_options(write=True)) == (None, "")


@pytest.mark.spark
def test_the_first_local_run_leaves_the_archive_and_the_next_maps_it_with_the_same_result(tmp_path: Path):
    write_json_lines(tmp_path / "in" / "events.jsonl", [e for n in range(3) for e in spark_run(n)])
    env = {k: v for k, v in os.environ.items() if k not in ("ATLAS_ENDPOINT", "PURVIEW_ACCOUNT_NAME")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")

    def backfill(out: str) -> dict:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "tools.cli",
                "spark",
                "backfill",
                str(tmp_path / "in"),
                "--master",
                "local[1]",
                "--dry-run",
                str(tmp_path / out),
                "--report",
                str(tmp_path / f"report-{out}"),
            ],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads((tmp_path / f"report-{out}" / "report.json").read_text())

    first = backfill("first.jsonl")
    written = sorted(p.name for p in (tmp_path / "cache" / "ol2purview").iterdir())
    assert len(written) == 1 and written[0].endswith(".jsa")  # no file of its own left behind
    archive = tmp_path / "cache" / "ol2purview" / written[0]
    stamp = archive.stat().st_mtime_ns
    second = backfill("second.jsonl")

    assert (tmp_path / "second.jsonl").read_bytes() == (tmp_path / "first.jsonl").read_bytes()
    assert (first["dryRunEntities"], second["dryRunEntities"]) == (13, 13)
    assert sorted(p.name for p in archive.parent.iterdir()) == written and archive.stat().st_mtime_ns == stamp
