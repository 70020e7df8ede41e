"""`ol2purview catalog scan` over a folder real Spark wrote (a Parquet output, a partitioned one), a hand-made Delta
table and the files of Purview's documented resource-set examples, registered in a real embedded catalog over HTTP:
the exact entities the ADLS scanner would register, idempotent, and a new partition updating its resource set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.lineage_helpers import Atlas
from tests.support.repository import PROJECT_ROOT
from tools.catalog import CatalogServer

LAKE = "https://contosolake.dfs.core.windows.net/silver"
PART = "part-00000-8f850371-9b03-42c4-9d22-f83bc81c9b68-c000.snappy.parquet"


def scan(folder: Path, catalog: CatalogServer, data_dir: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PURVIEW_ACCOUNT_NAME", "ATLAS_ENDPOINT")}
    env["OL2PURVIEW_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.cli",
            "catalog",
            "scan",
            str(folder),
            "--account",
            "contosolake",
            "--container",
            "silver",
            "--atlas-url",
            catalog.atlas_url,
            *extra,
        ],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _lake(spark: Any, root: Path) -> None:
    orders = spark.createDataFrame([(1, "a", 10.0), (2, "b", 20.5), (3, "c", 7.25)], ["id", "customer", "amount"])
    orders.coalesce(1).write.parquet(str(root / "orders"))
    sales = spark.createDataFrame(
        [(2023, 12, 5.0), (2024, 1, 6.0), (2024, 2, 7.0), (2024, 2, 8.0)], ["Year", "Month", "amount"]
    )
    sales.coalesce(1).write.partitionBy("Year", "Month").parquet(str(root / "sales"))
    # a Delta table as Delta writes it (delta-spark is not installed here): a log and a part file
    _write(root / "events" / "_delta_log" / "00000000000000000000.json", '{"commitInfo":{}}\n')
    _write(root / "events" / PART, "delta data")
    # Learn, "Understanding resource sets": machinesets/23/foo.parquet, weblogs/{LOC}/{N}.json, data{N}.csv
    _write(root / "machinesets" / "23" / "foo.parquet", "23")
    for name, text in (("cy_gb/1004.json", "{}"), ("cy_gb/234.json", "{\"a\":1}"), ("de_Ch/23434.json", "[]")):
        _write(root / "weblogs" / name, text)
    _write(root / "sample-data" / "data1.csv", "id\n1\n")
    _write(root / "sample-data" / "data22.csv", "id\n22\n")
    _write(root / "reports" / "plan_2024.docx", "not grouped")  # Word documents are never resource sets
    _write(root / "readme.md", "# lake")


def _summary(atlas_url: str) -> list[tuple[Any, ...]]:
    return [
        (
            e["typeName"],
            e["attributes"]["qualifiedName"],
            e["attributes"]["name"],
            e["attributes"].get("partitionCount"),
            e["attributes"].get("size"),
        )
        for e in Atlas(atlas_url).all_entities()
    ]


@pytest.mark.spark
def test_a_spark_lake_scanned_as_the_adls_scanner_would(spark: Any, tmp_path: Path) -> None:
    root = tmp_path / "silver"
    _lake(spark, root)
    catalog = CatalogServer(tmp_path / "catalog.sqlite").start()
    try:
        first = scan(root, catalog, tmp_path / "data")
        assert first.returncode == 0, first.stderr
        expected = [
            ("azure_datalake_gen2_filesystem", "https://contosolake.dfs.core.windows.net/silver", "silver", None, None),
            ("azure_datalake_gen2_path", f"{LAKE}/readme.md", "readme.md", None, 6),
            ("azure_datalake_gen2_path", f"{LAKE}/reports/plan_2024.docx", "plan_2024.docx", None, 11),
            ("azure_datalake_gen2_resource_set", f"{LAKE}/events/{{SparkPartitions}}", "events", 1, None),
            ("azure_datalake_gen2_resource_set", f"{LAKE}/machinesets/{{N}}/foo.parquet", "foo", 1, None),
            ("azure_datalake_gen2_resource_set", f"{LAKE}/orders/{{SparkPartitions}}", "orders", 1, None),
            (
                "azure_datalake_gen2_resource_set",
                f"{LAKE}/sales/Year={{Year}}/Month={{Month}}/{{SparkPartitions}}",
                "sales",
                3,
                None,
            ),
            ("azure_datalake_gen2_resource_set", f"{LAKE}/sample-data/data{{N}}.csv", "data", 2, None),
            ("azure_datalake_gen2_resource_set", f"{LAKE}/weblogs/{{LOC}}/{{N}}.json", "weblogs", 3, None),
        ]
        assert _summary(catalog.atlas_url) == expected
        weblogs = Atlas(catalog.atlas_url).all_entities()[-1]["attributes"]
        assert weblogs["totalSizeBytes"] == 2 + 7 + 2
        lines = first.stdout.splitlines()
        assert lines[0] == f"registered in {catalog.atlas_url} (rules: the catalog's resource-set rule config)"
        assert (
            lines[-1] == "1 filesystem, 6 resource sets (20 files), 2 single files: 9 created, 0 updated, 0 unchanged"
        )
        assert (
            "azure_datalake_gen2_resource_set           3  "
            f"{LAKE}/sales/Year={{Year}}/Month={{Month}}/{{SparkPartitions}}" in lines
        )

        before = {
            e["attributes"]["qualifiedName"]: (e["version"], e["updateTime"])
            for e in Atlas(catalog.atlas_url).all_entities()
        }
        second = scan(root, catalog, tmp_path / "data")
        assert second.stdout.splitlines()[-1].endswith(": 0 created, 0 updated, 9 unchanged")
        assert {
            e["attributes"]["qualifiedName"]: (e["version"], e["updateTime"])
            for e in Atlas(catalog.atlas_url).all_entities()
        } == before

        more = spark.createDataFrame([(2025, 3, 9.0)], ["Year", "Month", "amount"])
        more.coalesce(1).write.mode("append").partitionBy("Year", "Month").parquet(str(root / "sales"))
        third = scan(root, catalog, tmp_path / "data")
        assert third.stdout.splitlines()[-1].endswith(": 0 created, 1 updated, 8 unchanged")
        sales = [s for s in _summary(catalog.atlas_url) if s[2] == "sales"]
        assert sales == [
            (
                "azure_datalake_gen2_resource_set",
                f"{LAKE}/sales/Year={{Year}}/Month={{Month}}/{{SparkPartitions}}",
                "sales",
                4,
                None,
            )
        ]
    finally:
        catalog.stop()
