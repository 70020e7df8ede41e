"""Issue 31 (temporary datasets, no false edges) end to end over `ol2purview serve` (openlineage-python sends, the
worker writes into the embedded catalog), on both run-state stores (SQLite; Azure Table storage on Azurite). The lake
paths are registered first through the Atlas API, as a scan would. Events are tests/temporary_runs.py's, shaped as the
OpenLineage spec's job-to-job example (website/docs/spec/examples.md): the tasks of one ETL job pass `inmemory://`
datasets; a run with two outputs carries disjoint column lineage.

Asserted through the Atlas API: no entity for a temporary dataset; the save task's process reads what the load and
transform tasks read, whether its events come before or after theirs; each output of the two-output run lists only
the inputs its column lineage names (and the one input no output names); scanned assets are only referenced."""

from __future__ import annotations

from typing import Iterator

import pytest
import requests

from tests.e2e.lineage_helpers import Atlas, refs, replay, write_events
from tests.support import temporary_runs as tr
from tests.support.azurite_fixture import require_azurite
from tools.functions_host.launcher import ServeHandle, start_serve

pytestmark = pytest.mark.e2e

ADLS = "azure_datalake_gen2_path"
SCANNED = (
    "/raw/orders",
    "/raw/rates",
    "/raw/customers",
    "/curated/orders",
    "/gold/order_amounts",
    "/gold/customer_names",
)
APPLICATION = f"spark://{tr.JOB_NAMESPACE}/{tr.ETL_JOB}"


@pytest.fixture(scope="module", params=["sqlite", pytest.param("table", marks=pytest.mark.azurite)])
def serve(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    """One serve per run-state store, the lake's paths registered (as scanned) before any event."""
    env, storage = {}, "embedded"
    if request.param == "table":
        require_azurite()
        env["RUN_STATE_STORE"], storage = "table", "azurite"
    handle = start_serve(tmp_path_factory.mktemp(f"serve-{request.param}"), key="e2e-key", env=env, storage=storage)
    body = {
        "entities": [
            {
                "typeName": ADLS,
                "guid": f"-{i}",
                "attributes": {
                    "qualifiedName": f"{tr.LAKE_QN}{path}",
                    "name": path.rsplit("/", 1)[-1],
                    "description": "scanned",
                },
            }
            for i, path in enumerate(SCANNED, 1)
        ]
    }
    requests.post(f"{handle.atlas_url}/entity/bulk", json=body, timeout=10).raise_for_status()
    handle.scanned = {
        path: stable(Atlas(handle.atlas_url).entity(ADLS, f"{tr.LAKE_QN}{path}"))  # type: ignore
        for path in SCANNED
    }
    yield handle
    assert handle.stop() == 0, handle.output()


def stable(entity: dict) -> dict:
    """What a scan wrote and the connector must leave as it is (as tests/e2e/test_scanned_assets.py compares it:
    the catalog's updateTime moves when a process starts to reference the asset)."""
    return {
        k: entity.get(k)
        for k in ("typeName", "guid", "status", "attributes", "createdBy", "createTime", "classifications", "labels")
    }


def send(serve: ServeHandle, folder, events: list[dict]) -> None:
    replay(serve, write_events(folder, *events))
    serve.wait_until_processed()


def processes(atlas: Atlas, prefix: str) -> dict[str, tuple[list[str], list[str]]]:
    """The processes whose qualifiedName starts with `prefix`: qualifiedName -> (inputs, outputs)."""
    return {
        e["attributes"]["qualifiedName"]: (refs(e, "inputs"), refs(e, "outputs"))
        for e in atlas.all_entities()
        if e["typeName"] == "spark_process" and e["attributes"]["qualifiedName"].startswith(prefix)
    }


def chain_processes(atlas: Atlas) -> dict[str, tuple[list[str], list[str]]]:
    """Every process of the ETL job's tasks (the job's application also owns the two-output run's processes)."""
    return {
        name: edges
        for name, edges in processes(atlas, f"{APPLICATION}/processes/").items()
        if "/processes/split_orders/" not in name
    }


def test_a_temporary_dataset_between_runs_is_no_asset_and_lineage_passes_through_it(serve, tmp_path):
    atlas = Atlas(serve.atlas_url)
    load, transform, save = (tr.etl_chain("e2e")[i : i + 2] for i in (0, 2, 4))
    send(serve, tmp_path / "save", save)  # the reader first: its writers are not known yet
    # a process is named by the job name without its application's prefix (olparser/lineage/processes.py)
    save_process = f"{APPLICATION}/processes/Save task/{tr.LAKE_QN}/curated/orders"
    assert chain_processes(atlas) == {save_process: ([], [f"{tr.LAKE_QN}/curated/orders"])}

    send(serve, tmp_path / "writers", [*transform, *load])  # then its writers: the save task is written again
    assert chain_processes(atlas) == {
        save_process: ([f"{tr.LAKE_QN}/raw/orders", f"{tr.LAKE_QN}/raw/rates"], [f"{tr.LAKE_QN}/curated/orders"])
    }
    keys = atlas.keys()
    assert not [key for key in keys if "inmemory" in key[1] or key[0] == "openlineage_dataset"]
    assert not [key for key in keys if "Load task" in key[1] or "Transform task" in key[1]]
    for path in SCANNED:  # scanned assets: referenced, never changed
        assert stable(atlas.entity(ADLS, f"{tr.LAKE_QN}{path}")) == serve.scanned[path]


def test_each_output_of_a_run_lists_only_the_inputs_its_column_lineage_names(serve, tmp_path):
    atlas = Atlas(serve.atlas_url)
    send(serve, tmp_path / "split", tr.two_outputs("e2e-split"))
    prefix = f"{APPLICATION}/processes/split_orders/"
    assert processes(atlas, prefix) == {
        f"{prefix}{output}": (inputs, [output]) for output, inputs in tr.TWO_OUTPUT_EDGES.items()
    }
    assert not [key for key in atlas.keys() if key[0] == "openlineage_dataset"]
