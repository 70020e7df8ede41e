"""OpenLineage's consumer compatibility scenarios (issue 43): the events of the compatibility suite's scenarios
(../shared/openlineage/compat-consumer/scenarios, each with its config.json) sent through `ol2purview serve` by
`ol2purview replay` (openlineage-python's HTTP transport), in file order and reversed; the catalog then holds exactly
the dataset-level edges the suite's Dataplex consumer validates (dataplex-validation/<scenario>.links.json), each as
input -> process -> output, and no other edge.

A Dataplex link names a dataset by Dataplex's fully qualified name; `OL_DATASET` says which OpenLineage dataset of
the scenario's events that is (``gcs:bucket.`path` `` is `gs://bucket` + `path`, ``filesystem:localhost.`path` `` is
`file` + `/path`, `dbfs:host.path` is openlineage-spark's `hdfs://host` + `/path`, `bigquery:x` is `bigquery` + `x`),
and `WRITTEN` the (type, qualifiedName) the connector writes it as: placeholders for stores no rule maps, and the
Hive table of the Dataproc run's symlink (`hive_table`, the identity the connector prefers for a table).

Before: `simple_run_event` (runId `run_id`, not a UUID) was refused with 400, so its one edge was missing."""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest

from tests.e2e.lineage_helpers import Atlas, refs, replay, write_events
from tests.support.repository import SHARED
from tools.functions_host.launcher import ServeHandle, start_serve

COMPAT = SHARED / "openlineage" / "compat-consumer"
VALIDATED = ("airflow", "simple_run_event", "spark_dataproc_simple_producer_test")  # those with Dataplex links
PROCESS_TYPES = ("spark_process", "airflow_process", "openlineage_process")
WRITTEN = {  # Dataplex's name -> what the connector writes for that dataset
    "bigquery:mock-project.test.upload": ("openlineage_dataset", "bigquery/mock-project.test.upload"),
    "bigquery:mock-project.test.upload_cp": ("openlineage_dataset", "bigquery/mock-project.test.upload_cp"),
    "gcs:mock-bucket.`copied.csv`": ("openlineage_dataset", "gs://mock-bucket/copied.csv"),
    "gcs:mock-bucket.`test.csv`": ("openlineage_dataset", "gs://mock-bucket/test.csv"),
    "gcs:mock-bucket.`result.csv`": ("openlineage_dataset", "gs://mock-bucket/result.csv"),
    "gcs:mock-bucket.`uploaded_file.txt`": ("openlineage_dataset", "gs://mock-bucket/uploaded_file.txt"),
    "gcs:mock-bucket.`uploaded_data.txt`": ("openlineage_dataset", "gs://mock-bucket/uploaded_data.txt"),
    "gcs:mock-bucket.`copy_of_uploaded_file.txt`": (
        "openlineage_dataset",
        "gs://mock-bucket/copy_of_uploaded_file.txt",
    ),
    "gcs:mock-bucket.`copy_of_uploaded_data.txt`": (
        "openlineage_dataset",
        "gs://mock-bucket/copy_of_uploaded_data.txt",
    ),
    "gcs:mock-bucket.`compose_result.txt`": ("openlineage_dataset", "gs://mock-bucket/compose_result.txt"),
    "filesystem:localhost.`files/temp/data.txt`": ("openlineage_dataset", "file:/files/temp/data.txt"),
    "filesystem:localhost.`files/temp/downloaded_file.txt`": (
        "openlineage_dataset",
        "file:/files/temp/downloaded_file.txt",
    ),
    "bigquery:test.table.input": ("openlineage_dataset", "bigquery/test.table.input"),
    "bigquery:test.table.output": ("openlineage_dataset", "bigquery/test.table.output"),
    "dbfs:dataproc-producer-test-m.user/hive/warehouse/t1": ("hive_table", "default.t1@dataproc-producer-test-m"),
    "dbfs:dataproc-producer-test-m.user/hive/warehouse/t2": ("hive_table", "default.t2@dataproc-producer-test-m"),
}
OL_DATASET = {  # Dataplex's name -> the OpenLineage (namespace, name) of the scenario's events
    "bigquery:mock-project.test.upload": ("bigquery", "mock-project.test.upload"),
    "bigquery:mock-project.test.upload_cp": ("bigquery", "mock-project.test.upload_cp"),
    "gcs:mock-bucket.`copied.csv`": ("gs://mock-bucket", "copied.csv"),
    "gcs:mock-bucket.`test.csv`": ("gs://mock-bucket", "test.csv"),
    "gcs:mock-bucket.`result.csv`": ("gs://mock-bucket", "result.csv"),
    "gcs:mock-bucket.`uploaded_file.txt`": ("gs://mock-bucket", "uploaded_file.txt"),
    "gcs:mock-bucket.`uploaded_data.txt`": ("gs://mock-bucket", "uploaded_data.txt"),
    "gcs:mock-bucket.`copy_of_uploaded_file.txt`": ("gs://mock-bucket", "copy_of_uploaded_file.txt"),
    "gcs:mock-bucket.`copy_of_uploaded_data.txt`": ("gs://mock-bucket", "copy_of_uploaded_data.txt"),
    "gcs:mock-bucket.`compose_result.txt`": ("gs://mock-bucket", "compose_result.txt"),
    "filesystem:localhost.`files/temp/data.txt`": ("file", "/files/temp/data.txt"),
    "filesystem:localhost.`files/temp/downloaded_file.txt`": ("file", "/files/temp/downloaded_file.txt"),
    "bigquery:test.table.input": ("bigquery", "test.table.input"),
    "bigquery:test.table.output": ("bigquery", "test.table.output"),
    "dbfs:dataproc-producer-test-m.user/hive/warehouse/t1": (
        "hdfs://dataproc-producer-test-m",
        "/user/hive/warehouse/t1",
    ),
    "dbfs:dataproc-producer-test-m.user/hive/warehouse/t2": (
        "hdfs://dataproc-producer-test-m",
        "/user/hive/warehouse/t2",
    ),
}


def scenario_events(scenario: str) -> list[dict[str, Any]]:
    """The scenario's events in file order (line_01, line_02...; 1, 2, ... 10 by number)."""
    folder = COMPAT / "scenarios" / scenario
    json.loads((folder / "config.json").read_text(encoding="utf-8"))  # every scenario has one (the suite's input)
    files = sorted((folder / "events").glob("*.json"), key=lambda p: (len(p.stem), p.stem))
    return [json.loads(p.read_text(encoding="utf-8")) for p in files]


def validated_links(scenario: str) -> set[tuple[str, str]]:
    links = json.loads((COMPAT / "dataplex-validation" / f"{scenario}.links.json").read_text(encoding="utf-8"))
    return {(link["source"]["fully_qualified_name"], link["target"]["fully_qualified_name"]) for link in links}


def expected_edges(scenario: str) -> set[tuple[tuple[str, str], tuple[str, str]]]:
    return {(WRITTEN[source], WRITTEN[target]) for source, target in validated_links(scenario)}


@pytest.fixture(scope="module", params=["file order", "reversed"])
def catalog(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One serve per order: every validated scenario's events sent through it, then the catalog's processes."""
    folder = tmp_path_factory.mktemp(f"compat-{request.param.replace(' ', '-')}")
    handle: ServeHandle = start_serve(folder / "serve", key="compat-key")
    try:
        for scenario in VALIDATED:
            events = scenario_events(scenario)
            if request.param == "reversed":
                events.reverse()
            replay(handle, write_events(folder / scenario, *events))
        handle.wait_until_processed()
        atlas = Atlas(handle.atlas_url)
        keys = atlas.keys()
        processes = [atlas.entity(t, q) for t, q in sorted(keys) if t in PROCESS_TYPES]
        yield {"keys": keys, "processes": processes}
    finally:
        assert handle.stop() == 0, handle.output()


def catalog_edges(catalog: dict[str, Any]) -> set[tuple[tuple[str, str], tuple[str, str]]]:
    """Every input -> output edge of every process, each end as (type, qualifiedName)."""
    types = {qualified_name: type_name for type_name, qualified_name in catalog["keys"]}
    return {
        ((types[source], source), (types[target], target))
        for process in catalog["processes"]
        for source in refs(process, "inputs")
        for target in refs(process, "outputs")
    }


@pytest.mark.parametrize("scenario", VALIDATED)
def test_every_edge_dataplex_validates_is_in_the_catalog(catalog: dict[str, Any], scenario: str):
    scenario_datasets = {WRITTEN[name] for link in validated_links(scenario) for name in link}
    found = {edge for edge in catalog_edges(catalog) if edge[0] in scenario_datasets or edge[1] in scenario_datasets}
    assert found == expected_edges(scenario)


def test_the_catalog_holds_no_other_edge(catalog: dict[str, Any]):
    assert catalog_edges(catalog) == set().union(*(expected_edges(s) for s in VALIDATED))
    assert len(catalog_edges(catalog)) == 14  # airflow 12, simple_run_event 1, the Dataproc run 1


def test_the_links_name_the_scenarios_own_datasets():
    """The translation of Dataplex's names is checked against the events themselves: each named dataset is an input
    or output of the scenario's events."""
    for scenario in VALIDATED:
        sent = {
            (d["namespace"], d["name"])
            for e in scenario_events(scenario)
            for d in [*e.get("inputs", []), *e.get("outputs", [])]
        }
        named = {OL_DATASET[name] for link in validated_links(scenario) for name in link}
        assert named <= sent, scenario


def test_the_suites_smallest_event_keeps_its_run_id(catalog: dict[str, Any]):
    """simple_run_event's runId is `run_id`: accepted, and shown as sent on its process (a generic owner's: its
    producer `producer` is none the connector models)."""
    (process,) = [p for p in catalog["processes"] if refs(p, "outputs") == ["bigquery/test.table.output"]]
    assert (process["typeName"], process["attributes"]["qualifiedName"], process["attributes"]["lastRunId"]) == (
        "openlineage_process",
        "openlineage://job_namespace/job_name/processes/job_name/bigquery/test.table.output",
        "run_id",
    )
