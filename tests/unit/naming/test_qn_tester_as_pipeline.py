"""qn-tester answers what the connector writes (issue 43): the same (namespace, name) and the same settings (mount
points, workspace host, DATABRICKS_METASTORE_IDS, `--metastore`) given to `qn-tester` and to the pipeline's build of
a run that reads that dataset give the same type and qualifiedName, Unity Catalog names included."""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from olparser.lineage import LineageOptions, build_lineage
from olparser.naming import MappingEngine
from olparser.runs.merge import merge_event
from olparser.settings import Settings
from tests.support.rules import MAPPINGS_PATH
from tools import qn_tester

HOSTS = ("adb-1111111111111111.1.azuredatabricks.net", "adb-2222222222222222.2.azuredatabricks.net")
METASTORES = ("0a1b2c3d-0000-4000-8000-00000000abcd", "7f7f7f7f-1111-4222-8333-999999999999")
MOUNTS = [
    {"mountPoint": "/mnt/raw", "source": "abfss://raw@lakeacct.dfs.core.windows.net/"},
    {"mountPoint": "/mnt/curated", "source": "wasbs://cur@blobacct.blob.core.windows.net/zone"},
]
OUTPUT = ("abfss://silver@lakeacct.dfs.core.windows.net", "/out/table")
SEGMENT = st.text(alphabet="abcxyz019_", min_size=1, max_size=8)


@st.composite
def datasets(draw: st.DrawFn) -> tuple[str, str]:
    """(namespace, name) in the forms today's producers send: storage, mounts, Hive, Unity Catalog, SQL, unmatched."""
    a, b, c = draw(SEGMENT), draw(SEGMENT), draw(SEGMENT)
    host = draw(st.sampled_from(HOSTS))
    return draw(
        st.sampled_from(
            [
                (f"abfss://{a}@lakeacct.dfs.core.windows.net", f"/{b}/{c}"),
                (f"wasbs://{a}@blobacct.blob.core.windows.net", f"{b}/{c}"),
                (f"s3a://{a}", f"{b}/{c}"),
                ("dbfs", f"/mnt/raw/{b}/{c}"),
                ("dbfs", f"/mnt/curated/{b}"),
                ("dbfs", f"/user/hive/warehouse/{b}"),
                ("unity-catalog", f"{a}.{b}.{c}"),
                (f"databricks://{host}", f"{a}.{b}.{c}"),
                (f"unitycatalog://{host}:443", f"{a}.{b}.{c}"),
                ("sqlserver://srv.database.windows.net:1433;database=dw", f"{b}.{c}"),
                ("kafka://broker:9092", a),
                ("bigquery", f"{a}.{b}.{c}"),
            ]
        )
    )


@st.composite
def run_settings(draw: st.DrawFn) -> dict[str, Any]:
    """A run's workspace host and mount points, the metastore map, and `--metastore` (the workspace's metastore)."""
    workspace = draw(st.sampled_from((None, *HOSTS)))
    return {
        "workspace": workspace,
        "mounts": draw(st.booleans()),
        "metastore_ids": draw(
            st.lists(
                st.tuples(st.sampled_from(HOSTS), st.sampled_from(METASTORES)), max_size=2, unique_by=lambda x: x[0]
            )
        ),
        # `--metastore` is the metastore of the workspace the run comes from (a run of no known workspace has none)
        "metastore": draw(st.sampled_from((None, *METASTORES))) if workspace else None,
    }


@contextlib.contextmanager
def environment(**values: str | None) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def qn_tester_answer(namespace: str, name: str, given: dict[str, Any], mounts_file: Path) -> tuple[str, str]:
    args = ["--namespace", namespace, "--name", name]
    if given["workspace"]:
        args += ["--workspace-url", given["workspace"]]
    if given["mounts"]:
        args += ["--mounts", str(mounts_file)]
    if given["metastore"]:
        args += ["--metastore", given["metastore"]]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = qn_tester.main(args)
    assert code in (0, 3), err.getvalue()
    answer = json.loads(out.getvalue())
    return answer["PurviewType"], answer["QualifiedName"]


def metastore_setting(given: dict[str, Any], namespace: str) -> str:
    """DATABRICKS_METASTORE_IDS as the deployment would say what `--metastore` says: the workspace's metastore, and
    the metastore of the host a Unity Catalog namespace names."""
    pairs = dict(given["metastore_ids"])
    if given["metastore"]:
        if given["workspace"]:
            pairs[given["workspace"]] = given["metastore"]
        for host in HOSTS:
            if host in namespace:
                pairs[host] = given["metastore"]
    return ",".join(f"{h}={m}" for h, m in pairs.items())


def pipeline_answer(
    engine: MappingEngine, namespace: str, name: str, given: dict[str, Any], metastores: str
) -> tuple[str, str]:
    """The type and qualifiedName of the run's input in the plan the pipeline builds (the process's `inputs`)."""
    environment_properties: dict[str, Any] = {}
    if given["workspace"]:
        environment_properties["spark.databricks.workspaceUrl"] = given["workspace"]
    if given["mounts"]:
        environment_properties["mountPoints"] = MOUNTS
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2026-05-01T10:00:00Z",
        "run": {
            "runId": "0195f0c2-1111-7000-8000-000000000001",
            "facets": {
                "environment-properties": {
                    "_producer": "p",
                    "_schemaURL": "s",
                    "environment-properties": environment_properties,
                }
            },
        },
        "job": {"namespace": "spark-jobs", "name": "app.execute_insert.out_table"},
        "inputs": [{"namespace": namespace, "name": name}],
        "outputs": [{"namespace": OUTPUT[0], "name": OUTPUT[1]}],
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }
    options = LineageOptions.from_settings(Settings.from_env({"DATABRICKS_METASTORE_IDS": metastores}))
    plan = build_lineage(merge_event(None, event), engine, options)
    processes = [e for e in plan.entities if "inputs" in e["attributes"]]
    assert len(processes) == 1, plan.notes
    (reference,) = processes[0]["attributes"]["inputs"]
    return reference["typeName"], reference["uniqueAttributes"]["qualifiedName"]


ENGINE = MappingEngine.from_path(MAPPINGS_PATH)


@settings(max_examples=300, deadline=None)
@given(dataset=datasets(), given_settings=run_settings())
def test_qn_tester_names_a_dataset_as_the_pipeline_writes_it(dataset: tuple[str, str], given_settings: dict[str, Any]):
    namespace, name = dataset
    metastores = metastore_setting(given_settings, namespace)
    with tempfile.TemporaryDirectory() as folder:
        mounts_file = Path(folder) / "mounts.json"
        mounts_file.write_text(json.dumps(MOUNTS))
        with environment(DATABRICKS_METASTORE_IDS=",".join(f"{h}={m}" for h, m in given_settings["metastore_ids"])):
            answer = qn_tester_answer(namespace, name, given_settings, mounts_file)
    assert answer == pipeline_answer(ENGINE, namespace, name, given_settings, metastores)


def test_a_unity_catalog_name_with_its_metastore_is_the_scanned_table_in_plain_output(tmp_path: Path):
    """The issue's case: `--namespace unity-catalog --name main.sales.orders --metastore ID` gave a null
    qualifiedName and exit 3; it is the Unity Catalog scan's `databricks_table`, as the pipeline writes it."""
    given_settings = {"workspace": None, "mounts": False, "metastore_ids": [], "metastore": METASTORES[0]}
    answer = qn_tester_answer("unity-catalog", "main.sales.orders", given_settings, tmp_path / "none.json")
    assert answer == (
        "databricks_table",
        f"databricks://{METASTORES[0]}/catalogs/main/schemas/sales/tables/orders",
    )
    with environment(DATABRICKS_METASTORE_IDS=f"{HOSTS[0]}={METASTORES[1]}"):
        by_setting = qn_tester_answer(
            "unity-catalog",
            "main.sales.orders",
            {"workspace": HOSTS[0], "mounts": False, "metastore_ids": [], "metastore": None},
            tmp_path / "none.json",
        )
    assert by_setting == (
        "databricks_table",
        f"databricks://{METASTORES[1]}/catalogs/main/schemas/sales/tables/orders",
    )
