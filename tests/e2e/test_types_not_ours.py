"""Types the connector did not create, end to end over `ol2purview serve` (issues 32 and 42).

- A catalog whose `databricks_notebook` / `databricks_job` are not Purview's Databricks model (Process subtypes with
  serviceType "Databricks Unity Catalog", not runnables) refuses the start naming them and what differs, and changes
  nothing: the connector writes Databricks lineage in Purview's model only, never in a type it did not create.
- A same-named type of someone else's in place of one of the connector's own (`spark_application`) refuses the start
  naming it and TYPE_PREFIX; with TYPE_PREFIX=ol_ the connector's own types get their own names while Databricks
  lineage stays in Purview's built-in types (the connector's business metadata group prefixed), and the foreign
  definition stays byte-for-byte the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest
import requests

from olparser.lineage.databricks_model import purview_databricks_typedefs
from tests.e2e.lineage_helpers import Atlas, refs, replay, write_events
from tests.support import databricks_runs as dr
from tools.catalog import CatalogServer
from tools.samples.databricks import NotebookRun

pytestmark = pytest.mark.e2e

NATIVE = Path(__file__).parent / "corpus" / "purview_native_databricks_types.json"
NOTEBOOK = f"databricks://{dr.HOST}/notebooks/Repos/etl/orders"
ENV = {"DATABRICKS_WORKSPACE_HOSTS": f"{dr.WORKSPACE_ID}={dr.HOST}"}
FOREIGN = {
    "name": "spark_application",
    "category": "ENTITY",
    "serviceType": "Contoso",
    "superTypes": ["DataSet"],
    "typeVersion": "1.0",
    "attributeDefs": [],
}


@pytest.fixture
def catalog_with_other_databricks_types(tmp_path: Path) -> Iterator[CatalogServer]:
    """A catalog where the names of Purview's Databricks model are someone else's types: its built-in model deleted
    (relationships first, then subtypes before their supertypes), the other definitions written."""
    server = CatalogServer(tmp_path / "catalog.sqlite").start()
    model = purview_databricks_typedefs()
    for name in [d["name"] for d in model["relationshipDefs"]] + [d["name"] for d in reversed(model["entityDefs"])]:
        requests.delete(f"{server.atlas_url}/types/typedef/name/{name}", timeout=10).raise_for_status()
    native = {"entityDefs": json.loads(NATIVE.read_text())["entityDefs"]}
    requests.post(f"{server.atlas_url}/types/typedefs", json=native, timeout=10).raise_for_status()
    yield server
    server.stop()


@pytest.fixture
def catalog_with_foreign_spark_application(tmp_path: Path) -> Iterator[CatalogServer]:
    server = CatalogServer(tmp_path / "catalog.sqlite").start()
    requests.post(f"{server.atlas_url}/types/typedefs", json={"entityDefs": [FOREIGN]}, timeout=10).raise_for_status()
    yield server
    server.stop()


def answers(atlas_url: str, *names: str) -> dict[str, bytes]:
    """The catalog's answers for these definitions, as bytes."""
    return {name: requests.get(f"{atlas_url}/types/typedef/name/{name}", timeout=10).content for name in names}


def test_databricks_types_that_are_not_purviews_model_stop_serve_and_stay_as_they_are(
    catalog_with_other_databricks_types, serve_factory
):
    atlas_url = catalog_with_other_databricks_types.atlas_url
    before = answers(atlas_url, "databricks_notebook", "databricks_job")
    with pytest.raises(RuntimeError) as raised:
        serve_factory(key="k", env={**ENV, "ATLAS_ENDPOINT": atlas_url, "TYPE_PREFIX": "ol_"})
    message = str(raised.value)
    assert "exited with 1" in message
    assert (
        "type databricks_notebook (serviceType 'Databricks Unity Catalog') is not Purview's Databricks model: it "
        "does not descend from databricks_runnable; it has no attribute clusterName, sparkVersion, user"
    ) in message
    assert "never changes a type it did not create" in message
    assert answers(atlas_url, "databricks_notebook", "databricks_job") == before


def test_type_prefix_renames_only_the_connectors_own_types(
    catalog_with_foreign_spark_application, serve_factory, tmp_path
):
    atlas_url = catalog_with_foreign_spark_application.atlas_url
    before = answers(atlas_url, "spark_application", "databricks_process", "databricks_notebook")
    with pytest.raises(RuntimeError) as refused:
        serve_factory(key="k", env={**ENV, "ATLAS_ENDPOINT": atlas_url})
    assert "type spark_application (serviceType 'Contoso') differs from the connector's" in str(refused.value)
    assert "set TYPE_PREFIX (for example TYPE_PREFIX=ol_)" in str(refused.value)

    serve = serve_factory(key="k", env={**ENV, "ATLAS_ENDPOINT": atlas_url, "TYPE_PREFIX": "ol_"})
    plain_spark = NotebookRun(
        run_id=dr.run_id(90),
        started=dr.T0,
        statement=dr.orders_run(90).statement,
        inputs=dr.orders_run(90).inputs,
        output=dr.orders_run(90).output,
        job_namespace="prod-spark",
        workspace_id="",
        mounts=dr.orders_run(90).mounts,
    )
    replay(serve, write_events(tmp_path / "events", *dr.events(dr.orders_run(1)), *dr.events(plain_spark)))
    serve.wait_until_processed()

    assert answers(atlas_url, "spark_application", "databricks_process", "databricks_notebook") == before
    atlas = Atlas(atlas_url)
    types = {t for t, _ in atlas.keys()}
    assert {"ol_spark_application", "ol_spark_process", "databricks_notebook", "databricks_process"} <= types
    assert not types & {"spark_application", "spark_process", "ol_databricks_process", "ol_databricks_notebook"}
    (process,) = [e for e in atlas.all_entities() if e["typeName"] == "databricks_process"]
    assert refs(process, "task") == [NOTEBOOK]
    assert set(process["businessAttributes"]) == {"ol_ol2purview"}
    ours = requests.get(f"{atlas_url}/types/typedef/name/ol_spark_process", timeout=10).json()
    assert ours["options"] == {"managedBy": "ol2purview"}
