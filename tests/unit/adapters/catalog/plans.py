"""LineagePlans as the entity builder hands them over: external datasets, owners, a process with placeholders."""

from __future__ import annotations

from olparser.lineage.plan import LineagePlan

ADLS = "azure_datalake_gen2_path"
RAW = "https://lake.dfs.core.windows.net/raw/orders"
CURATED = "https://lake.dfs.core.windows.net/curated/orders"
NOTEBOOK = "databricks://adb-1.azuredatabricks.net/notebooks/etl/orders"
PROCESS = NOTEBOOK + "/processes/orders"


def dataset(guid: str, type_name: str, qualified_name: str) -> dict:
    return {
        "typeName": type_name,
        "guid": guid,
        "attributes": {"qualifiedName": qualified_name, "name": qualified_name.rsplit("/", 1)[-1]},
    }


def process(guid: str, qualified_name: str, inputs: list[str], outputs: list[str], owner: str | None = None) -> dict:
    entity = {
        "typeName": "databricks_process",
        "guid": guid,
        "attributes": {"qualifiedName": qualified_name, "name": qualified_name.rsplit("/", 1)[-1]},
        "relationshipAttributes": {"inputs": [{"guid": g} for g in inputs], "outputs": [{"guid": g} for g in outputs]},
    }
    if owner:
        entity["relationshipAttributes"]["notebook"] = {"guid": owner, "relationshipType": "notebook_process"}
    return entity


def orders_plan() -> LineagePlan:
    """raw/orders -> notebook process -> curated/orders, both on ADLS (one type)."""
    return LineagePlan(
        entities=(
            {
                "typeName": "databricks_notebook",
                "guid": "-3",
                "attributes": {"qualifiedName": NOTEBOOK, "name": "orders"},
            },
            process("-4", PROCESS, ["-1"], ["-2"], owner="-3"),
        ),
        external_datasets=(dataset("-1", ADLS, RAW), dataset("-2", ADLS, CURATED)),
    )
