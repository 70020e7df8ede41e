"""For the durable-delivery proofs and benchmarks: generated Databricks-like runs, sending them, and a comparable
dump of the catalog.

Every generated run is deterministic in its index (runId, times, names), so two replays of the same runs must leave
identical catalogs, whatever faults, crashes or orderings happened in between.
"""

from __future__ import annotations

import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

import requests

from olparser.adapters.catalog.business_attributes import as_the_connector_reads, connector_business_attributes
from olparser.jsontypes import JSON

from .databricks import ColumnEdge, Dataset, NotebookRun, events

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark"
WORKSPACE = "adb-5551234567890123.7.azuredatabricks.net"
WORKSPACE_ID = "5551234567890123"
RAW = "abfss://raw@contosolake.dfs.core.windows.net"
CURATED = "abfss://curated@contosolake.dfs.core.windows.net"
SHARED_INPUTS = ("sales/orders", "sales/customers", "sales/products", "sales/stores")
COLUMNS = ("id", "customer_id", "product_id", "store_id", "amount", "day")
RUN_NAMESPACE = uuid.UUID("6f0b7a52-4c1e-4d8e-9a55-0d2f3c9e1a10")
ENDPOINT = "/api/v1/lineage"


# --- generated events ------------------------------------------------------------------------------------------------


def run_id_for(index: int, namespace: uuid.UUID = RUN_NAMESPACE) -> str:
    """The runId of generated run `index` (a UUID, the same in every replay)."""
    return str(uuid.uuid5(namespace, f"run-{index}"))


def output_name(index: int) -> str:
    return f"delivery/out_{index:04d}"


def notebook_path(index: int) -> str:
    return f"/Repos/etl/delivery/notebook_{index:04d}"


def run_inputs(index: int) -> tuple[str, str]:
    """The two shared input datasets (names under RAW) that run `index` reads."""
    return SHARED_INPUTS[index % len(SHARED_INPUTS)], SHARED_INPUTS[(index + 1) % len(SHARED_INPUTS)]


def databricks_run(index: int, *, extra_run_facets: JSON | None = None) -> list[JSON]:
    """START and COMPLETE of one Databricks notebook run: two shared inputs, its own output, column lineage; the
    environment facet on both events (no RUNNING), as some openlineage-spark set-ups send it.

    Each run has its own notebook and output, so the processes it writes are touched by this run only, and the
    shared inputs carry the same facets in every run: the final catalog does not depend on processing order.
    """
    first, second = run_inputs(index)
    lineage = tuple(
        edge
        for column in COLUMNS
        for edge in (ColumnEdge(column, 0, column), ColumnEdge(column, 1, "id", "INDIRECT", "JOIN"))
    )
    return events(
        NotebookRun(
            run_id=run_id_for(index),
            started=datetime(2025, 3, 1, index // 60 % 24, index % 60, tzinfo=timezone.utc),
            statement=f"append_data.out_{index:04d}",
            inputs=(Dataset(RAW, first, COLUMNS, data_source=True), Dataset(RAW, second, COLUMNS, data_source=True)),
            output=Dataset(CURATED, output_name(index), COLUMNS, data_source=True),
            notebook=notebook_path(index),
            column_lineage=lineage,
            mounts=None,
            running=False,
            job_namespace=WORKSPACE,
            workspace_id=WORKSPACE_ID,
            cluster_name=None,
            environment_on=("START", "COMPLETE"),
            environment_extra={"spark.databricks.workspaceUrl": WORKSPACE},
            run_facets=extra_run_facets or {},
            parent=False,
            job_type=True,
            offsets=(1.0, 1.0, 9.5),
        )
    )


def generated_events(count: int, start: int = 0) -> list[JSON]:
    """START and COMPLETE of runs start .. start+count-1, in emission order."""
    return [event for index in range(start, start + count) for event in databricks_run(index)]


def write_jsonl(path: Path, events: Iterable[JSON]) -> Path:
    """Events as a JSON-lines file for `ol2purview replay`."""
    path.write_text("".join(json.dumps(event) + "\n" for event in events), encoding="utf-8")
    return path


# --- sending ---------------------------------------------------------------------------------------------------------


def post_events(url: str, key: str, events: list[JSON], senders: int = 4, timeout: float = 30.0) -> list[int]:
    """POST each event to the single-event route from `senders` keep-alive sessions; the statuses, in event order."""
    chunks = [list(range(i, len(events), senders)) for i in range(senders)]
    statuses = [0] * len(events)

    def send(indexes: list[int]) -> None:
        with requests.Session() as session:
            for i in indexes:
                response = session.post(
                    url + ENDPOINT, headers={"x-functions-key": key}, json=events[i], timeout=timeout
                )
                statuses[i] = response.status_code

    with ThreadPoolExecutor(senders) as pool:
        list(pool.map(send, chunks))
    return statuses


# --- the catalog -----------------------------------------------------------------------------------------------------

_VOLATILE_ENTITY_KEYS = frozenset(
    {
        "guid",
        "createTime",
        "updateTime",
        "version",
        "createdBy",
        "updatedBy",
        "lastModifiedTS",
        "homeId",
        "provenanceType",
        "proxy",
        "isIncomplete",
    }
)
_VOLATILE_REFERENCE_KEYS = frozenset(
    {
        "guid",
        "relationshipGuid",
        "relationshipStatus",
        "relationshipAttributes",
        "displayText",
        "entityStatus",
        "relationshipType",
    }
)


def all_entity_guids(atlas_url: str, include_deleted: bool = False) -> list[str]:
    """Every entity's guid, through basic search paged by 1,000."""
    guids: list[str] = []
    while True:
        body = {
            "typeName": "_ALL_ENTITY_TYPES",
            "query": "*",
            "limit": 1000,
            "offset": len(guids),
            "excludeDeletedEntities": not include_deleted,
        }
        page = requests.post(f"{atlas_url}/search/basic", json=body, timeout=30).json().get("entities") or []
        guids += [header["guid"] for header in page]
        if len(page) < 1000:
            return guids


def fetch_entities(atlas_url: str, guids: list[str]) -> list[JSON]:
    """The entities as the connector reads them (its business attributes on Purview's types folded in)."""
    groups = connector_business_attributes()
    entities: list[JSON] = []
    for start in range(0, len(guids), 100):
        params = [("guid", guid) for guid in guids[start : start + 100]]
        response = requests.get(f"{atlas_url}/entity/bulk", params=params, timeout=30)
        response.raise_for_status()
        entities += [as_the_connector_reads(e, groups) for e in response.json()["entities"]]
    return entities


def catalog_dump(atlas_url: str) -> dict[tuple[str, str], JSON]:
    """The active entities by (typeName, qualifiedName), without guids, times and versions; references to other
    entities are rewritten as (typeName, qualifiedName) so that two catalogs built in different orders compare equal.
    Raises AssertionError when one (typeName, qualifiedName) is held by two active entities (a duplicate)."""
    entities = fetch_entities(atlas_url, all_entity_guids(atlas_url))
    names = {e["guid"]: (e["typeName"], e["attributes"]["qualifiedName"]) for e in entities}
    dump: dict[tuple[str, str], JSON] = {}
    for entity in entities:
        key = names[entity["guid"]]
        assert key not in dump, f"duplicate entity {key}"
        clean = {k: v for k, v in entity.items() if k not in _VOLATILE_ENTITY_KEYS}
        dump[key] = _without_guids(clean, names)
    return dump


def _without_guids(value: Any, names: dict[str, tuple[str, str]]) -> Any:
    if isinstance(value, dict):
        if "guid" in value and "typeName" in value and len(value) <= 8 and value.get("guid") in names:
            return {"ref": list(names[value["guid"]])}
        if "guid" in value and "typeName" in value:  # a reference to an entity that is not active
            return {"ref": [value["typeName"], (value.get("uniqueAttributes") or {}).get("qualifiedName")]}
        return {
            k: _without_guids(v, names)
            for k, v in sorted(value.items())
            if k not in _VOLATILE_REFERENCE_KEYS or k == "relationshipAttributes"
        }
    if isinstance(value, list):
        items = [_without_guids(v, names) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    return value


def counts_by_type(dump: dict[tuple[str, str], JSON]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for type_name, _ in dump:
        counts[type_name] = counts.get(type_name, 0) + 1
    return dict(sorted(counts.items()))


def catalog_calls(catalog_url: str) -> int:
    """Total Atlas calls the embedded catalog has counted (faulted ones included)."""
    return requests.get(f"{catalog_url}/_ol2purview/calls", timeout=10).json()["total"]


def set_catalog_faults(catalog_url: str, spec: str) -> str:
    response = requests.put(f"{catalog_url}/_ol2purview/faults", data=spec, timeout=10)
    response.raise_for_status()
    return response.json()["spec"]


def landed_run_ids(dump: dict[tuple[str, str], JSON]) -> set[str]:
    """The runIds that wrote a process (each process records the last run that wrote it)."""
    return {
        entity["attributes"].get("lastRunId")
        for (type_name, _), entity in dump.items()
        if type_name == "databricks_process"
    }


def lake_path(namespace: str, name: str) -> str:
    """The qualifiedName of an ADLS Gen2 path: abfss://<container>@contosolake.dfs.core.windows.net + name."""
    container, _, rest = namespace.split("://", 1)[1].partition("@")
    folder = rest.partition("/")[2]
    return f"https://contosolake.dfs.core.windows.net/{container}/{folder + '/' if folder else ''}{name}"


def notebook_name(index: int) -> str:
    """The qualifiedName of generated run `index`'s notebook."""
    return f"databricks://{WORKSPACE}/notebooks{notebook_path(index)}"


def run_output(index: int, outputs: Mapping[int, str] | None = None) -> str:
    """The qualifiedName of the output run `index` writes: the generated one unless `outputs` says otherwise."""
    return (outputs or {}).get(index) or lake_path(CURATED, output_name(index))


def expected_entity_keys(indexes: Iterable[int], outputs: Mapping[int, str] | None = None) -> set[tuple[str, str]]:
    """Every entity but the processes that generated runs `indexes` leave in an empty catalog: the workspace, the
    shared inputs they read, and per run its notebook and its output."""
    indexes = list(indexes)
    return {
        ("databricks_workspace", f"databricks://{WORKSPACE}"),
        *(("azure_datalake_gen2_path", lake_path(RAW, name)) for index in indexes for name in run_inputs(index)),
        *(("databricks_notebook", notebook_name(index)) for index in indexes),
        *(("azure_datalake_gen2_path", run_output(index, outputs)) for index in indexes),
    }


def catalog_mismatches(
    dump: dict[tuple[str, str], JSON], indexes: Iterable[int], outputs: Mapping[int, str] | None = None
) -> list[str]:
    """What is wrong with a catalog that should hold exactly generated runs `indexes`: missing or extra entities,
    and processes that are missing, extra, or not as sent (see `process_mismatches`). Empty when it is exact."""
    indexes = list(indexes)
    keys = {key for key in dump if key[0] != "databricks_process"}
    expected = expected_entity_keys(indexes, outputs)
    problems = [f"missing {key}" for key in sorted(expected - keys)]
    problems += [f"extra {key}" for key in sorted(keys - expected)]
    processes = sum(1 for type_name, _ in dump if type_name == "databricks_process")
    if processes != len(indexes):
        problems.append(f"{processes} processes for {len(indexes)} runs")
    return problems + process_mismatches(dump, indexes, outputs)


def process_mismatches(
    dump: dict[tuple[str, str], JSON], indexes: Iterable[int], outputs: Mapping[int, str] | None = None
) -> list[str]:
    """What is wrong with the processes of generated runs `indexes`: missing, another run's id, other inputs or
    outputs. Empty when every one landed as sent. A run's process is found by its output, so that these checks do
    not depend on how processes are named."""
    by_output: dict[str, list[JSON]] = {}
    for (type_name, _), entity in dump.items():
        if type_name == "databricks_process":
            for ref in entity["attributes"].get("outputs") or []:
                by_output.setdefault(ref["ref"][1], []).append(entity["attributes"])
    problems = []
    for index in indexes:
        output = run_output(index, outputs)
        found = by_output.get(output, [])
        if len(found) != 1:
            problems.append(f"run {index}: {len(found)} processes write {output}")
            continue
        attributes = found[0]
        inputs = sorted(ref["ref"][1] for ref in attributes.get("inputs") or [])
        written = sorted(ref["ref"][1] for ref in attributes.get("outputs") or [])
        expected_inputs = sorted(lake_path(RAW, name) for name in run_inputs(index))
        if attributes.get("lastRunId") != run_id_for(index):
            problems.append(f"run {index}: lastRunId {attributes.get('lastRunId')}")
        if inputs != expected_inputs or written != [output]:
            problems.append(f"run {index}: inputs {inputs}, outputs {written}")
    return problems


LEAKS = ("Traceback", "/work/", ".py", 'File "')  # signs of a stack trace or an internal path in an answer


def leaks(text: str) -> bool:
    """Whether an answer or a log shows a stack trace or an internal path."""
    return any(leak in text for leak in LEAKS)
