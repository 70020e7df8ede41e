"""Issue 32, types the connector did not create, end to end over `ol2purview serve`: a catalog pre-loaded with
Purview's native `databricks_notebook` / `databricks_job` (Process subtypes, serviceType "Databricks Unity Catalog")
refuses the start naming them, what differs and TYPE_PREFIX; with TYPE_PREFIX=ol_ the lineage is written under the
connector's own prefixed types and the native definitions stay byte-for-byte the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest
import requests

from tests.e2e.lineage_helpers import Atlas, refs, replay, write_events
from tests.support import databricks_runs as dr
from tools.catalog import CatalogServer

pytestmark = pytest.mark.e2e

NATIVE = Path(__file__).parent / "corpus" / "purview_native_databricks_types.json"
NOTEBOOK = f"databricks://{dr.HOST}/notebooks/Repos/etl/orders"
ENV = {"DATABRICKS_WORKSPACE_HOSTS": f"{dr.WORKSPACE_ID}={dr.HOST}"}


@pytest.fixture
def catalog_with_native_types(tmp_path: Path) -> Iterator[CatalogServer]:
    server = CatalogServer(tmp_path / "catalog.sqlite").start()
    native = {"entityDefs": json.loads(NATIVE.read_text())["entityDefs"]}
    requests.post(f"{server.atlas_url}/types/typedefs", json=native, timeout=10).raise_for_status()
    yield server
    server.stop()


def native_bytes(atlas_url: str) -> dict[str, bytes]:
    """The catalog's answers for the native definitions, as bytes."""
    return {
        name: requests.get(f"{atlas_url}/types/typedef/name/{name}", timeout=10).content
        for name in ("databricks_notebook", "databricks_job")
    }


def test_serve_refuses_to_start_naming_the_native_types_and_type_prefix(catalog_with_native_types, serve_factory):
    before = native_bytes(catalog_with_native_types.atlas_url)
    with pytest.raises(RuntimeError) as raised:
        serve_factory(key="k", env={**ENV, "ATLAS_ENDPOINT": catalog_with_native_types.atlas_url})
    message = str(raised.value)
    assert "exited with 1" in message
    assert (
        "could not start: type databricks_job (serviceType 'Databricks Unity Catalog') differs from the "
        "connector's: its supertypes ['Process'] lead to Process, ours ['Asset'] to neither Process nor "
        "DataSet"
    ) in message
    assert "type databricks_notebook (serviceType 'Databricks Unity Catalog')" in message
    assert "set TYPE_PREFIX (for example TYPE_PREFIX=ol_)" in message
    assert native_bytes(catalog_with_native_types.atlas_url) == before


def test_with_type_prefix_lineage_is_written_and_the_native_types_stay_byte_for_byte(
    catalog_with_native_types, serve_factory, tmp_path
):
    atlas_url = catalog_with_native_types.atlas_url
    before = native_bytes(atlas_url)
    serve = serve_factory(key="k", env={**ENV, "ATLAS_ENDPOINT": atlas_url, "TYPE_PREFIX": "ol_"})
    replay(serve, write_events(tmp_path / "events", *dr.events(dr.orders_run(1))))
    serve.wait_until_processed()

    assert native_bytes(atlas_url) == before
    atlas = Atlas(atlas_url)
    processes = [e for e in atlas.all_entities() if e["typeName"] == "ol_databricks_process"]
    assert len(processes) == 1
    process = atlas.entity("ol_databricks_process", processes[0]["attributes"]["qualifiedName"])
    assert refs(process, "notebook") == [NOTEBOOK]
    assert atlas.entity("ol_databricks_notebook", NOTEBOOK)["typeName"] == "ol_databricks_notebook"
    assert {t for t, _ in atlas.keys()} >= {
        "ol_databricks_process",
        "ol_databricks_notebook",
        "ol_databricks_workspace",
    }
    assert not {t for t, _ in atlas.keys()} & {"databricks_process", "databricks_notebook", "databricks_job"}
    ours = requests.get(f"{atlas_url}/types/typedef/name/ol_databricks_notebook", timeout=10).json()
    assert ours["options"] == {"managedBy": "ol2purview"}
