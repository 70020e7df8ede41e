"""Notebook-service runs as openlineage-spark emits them in Microsoft Fabric and Azure Synapse: the one builder of
such runs for the tests (and the benchmarks, which import nothing from tests/).

Shapes, from the producers' own output:
- **Fabric**: DataHub's regression fixture of a Fabric notebook (Fabric Runtime 1.3, Spark 3.5, openlineage-spark
  1.26.0; datahub-project/datahub `metadata-integration/java/openlineage-converter/src/test/resources/ol_events/
  fabric_runtime_notebook_events.jsonl`): job `{notebook}_{session guid with underscores}.{action}.{table}` in the
  namespace the user configured, `parent` = the session job (its run id the application run), `spark_properties`
  with `trident.artifact.id`, `trident.artifact.name`, `trident.workspace.id`, `trident.artifact.workspace.id`,
  `spark.synapse.context.notebookname`, `spark.openlineage.source: fabric`, `spark.app.name: SynapseEnvPy`; OneLake
  datasets `abfss://{workspace id}@onelake.dfs.fabric.microsoft.com` + `/{item id}/Tables/[dbo/]{table}`; the
  `jobType` facet `{processingType: BATCH, integration: SPARK, jobType: SQL_JOB}`.
- **Synapse**: the application job is the Livy session name `{notebook}_{spark pool}_{epoch seconds}` normalised by
  openlineage-spark (`NameNormalizer`: `Notebook 1_sparkpool001_1778577132` -> `notebook_1_sparkpool001_1778577132`),
  in a job namespace containing `azuresynapsespark` (reference/producers-and-estate.md, "Job identity"), the notebook
  in `spark.synapse.context.notebookname` when the Spark properties are captured.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.26.0/integration/spark"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
FABRIC_NAMESPACE = "fabric-test-workspace"
FABRIC_WORKSPACE = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
FABRIC_NOTEBOOK_ID = "22223333-4444-5555-6666-777788889999"
FABRIC_NOTEBOOK = "nb_bronze_to_silver"
BRONZE_ITEM = "11112222-3333-4444-5555-666677778888"
SILVER_ITEM = "aaaabbbb-cccc-dddd-eeee-ffff00001111"
ONELAKE = f"abfss://{FABRIC_WORKSPACE}@onelake.dfs.fabric.microsoft.com"
SYNAPSE_NAMESPACE = "azuresynapsespark-contoso"
T0 = datetime(2026, 9, 23, 23, 18, 16, tzinfo=timezone.utc)
CTAS = "atomic_replace_table_as_select.chimcobldhq2al35edq20lrfe9ln6s31cdiiasr9dhr6asivdhk2ap32ds_customers"


def _facet(**fields: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/Facet.json", **fields}


def session_job(notebook: str, session: str) -> str:
    """Fabric's application job name: the notebook and the session guid, dashes as underscores."""
    return f"{notebook}_{session.replace('-', '_')}"


def fabric_properties(notebook_id: str = FABRIC_NOTEBOOK_ID, notebook: str = FABRIC_NOTEBOOK) -> dict[str, str]:
    return {
        "spark.app.id": "application_1700000000000_0001",
        "trident.artifact.workspace.id": FABRIC_WORKSPACE,
        "spark.master": "yarn",
        "spark.openlineage.source": "fabric",
        "spark.trident.highconcurrency.enabled": "false",
        "trident.artifact.id": notebook_id,
        "trident.workspace.id": FABRIC_WORKSPACE,
        "spark.openlineage.transport.type": "file",
        "spark.app.name": "SynapseEnvPy",
        "spark.synapse.context.notebookname": notebook,
        "trident.artifact.name": notebook,
    }


def onelake_table(item: str, table: str, schema: str | None = "dbo") -> dict[str, Any]:
    name = f"/{item}/Tables/{schema}/{table}" if schema else f"/{item}/Tables/{table}"
    return {
        "namespace": ONELAKE,
        "name": name,
        "facets": {
            "dataSource": _facet(name=ONELAKE, uri=ONELAKE),
            "schema": _facet(
                fields=[{"name": "CustomerID", "type": "integer"}, {"name": "CustomerName", "type": "string"}]
            ),
        },
    }


def notebook_event(
    *,
    session_app: str,
    action: str,
    run: str,
    parent_run: str,
    namespace: str,
    properties: dict[str, str] | None,
    inputs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    event_type: str = "COMPLETE",
    at: datetime = T0,
) -> dict[str, Any]:
    """One event of one SQL job of a notebook session (`action`: `{command}.{table}`; "" for the session's own,
    application-level run)."""
    facets: dict[str, Any] = {
        "parent": _facet(run={"runId": parent_run}, job={"namespace": namespace, "name": session_app}),
        "processing_engine": _facet(version="3.5.5.5.4.20260807.1", name="spark", openlineageAdapterVersion="1.26.0"),
        "environment-properties": _facet(**{"environment-properties": {}}),
    }
    if properties is not None:
        facets["spark_properties"] = _facet(properties=dict(properties))
    job_type = "SQL_JOB" if action else "APPLICATION"
    return {
        "eventTime": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
        "eventType": event_type,
        "run": {"runId": run, "facets": facets},
        "job": {
            "namespace": namespace,
            "name": f"{session_app}.{action}" if action else session_app,
            "facets": {"jobType": _facet(processingType="BATCH", integration="SPARK", jobType=job_type)},
        },
        "inputs": inputs,
        "outputs": outputs,
    }


def fabric_ctas_run(
    session: str, *, started: datetime = T0, properties: dict[str, str] | None = None, notebook: str = FABRIC_NOTEBOOK
) -> list[dict[str, Any]]:
    """The fixture's `saveAsTable` overwrite of silver `customers` from bronze `customers` in one session: START and
    COMPLETE of its SQL job."""
    session_app = session_job(notebook, session)
    run = str(uuid.uuid5(uuid.NAMESPACE_URL, f"fabric/{session}/ctas"))
    parent = str(uuid.uuid5(uuid.NAMESPACE_URL, f"fabric/{session}"))
    props = fabric_properties(notebook=notebook) if properties is None else properties
    common: dict[str, Any] = dict(
        session_app=session_app,
        action=CTAS,
        run=run,
        parent_run=parent,
        namespace=FABRIC_NAMESPACE,
        properties=props,
        inputs=[onelake_table(BRONZE_ITEM, "customers", schema=None)],
        outputs=[onelake_table(SILVER_ITEM, "customers")],
    )
    return [
        notebook_event(event_type="START", at=started, **common),
        notebook_event(event_type="COMPLETE", at=started + timedelta(seconds=4), **common),
    ]


def streaming_batches(
    count: int, *, every_seconds: int = 10, started: datetime = T0, emission_pattern: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """`count` micro-batches of one Structured Streaming query, each a run of its own (START, COMPLETE) as
    openlineage-spark emits them (reference/producers-and-estate.md: "Each Structured Streaming micro-batch is its own
    run"; the `jobType` facet with `processingType: STREAMING`, 2-0-4's `emissionPattern` when given): Kafka topic
    `orders` into the lake's curated `orders`."""
    job_type = _facet(processingType="STREAMING", integration="SPARK", jobType="SQL_JOB")
    if emission_pattern is not None:
        job_type["emissionPattern"] = emission_pattern
    events = []
    for number in range(count):
        at = started + timedelta(seconds=every_seconds * number)
        run = str(uuid.uuid5(uuid.NAMESPACE_URL, f"stream/orders/{number}"))
        body = {
            "producer": PRODUCER,
            "schemaURL": SCHEMA_URL,
            "run": {
                "runId": run,
                "facets": {
                    "parent": _facet(
                        run={"runId": str(uuid.uuid5(uuid.NAMESPACE_URL, "stream/orders"))},
                        job={"namespace": "streams", "name": "orders_stream"},
                    )
                },
            },
            "job": {
                "namespace": "streams",
                "name": "orders_stream.micro_batch_execution.orders",
                "facets": {"jobType": job_type},
            },
            "inputs": [{"namespace": "kafka://broker.contoso.com:9092", "name": "orders"}],
            "outputs": [{"namespace": "abfss://curated@contosolake.dfs.core.windows.net", "name": "orders"}],
        }
        events += [
            {**body, "eventType": "START", "eventTime": _time(at)},
            {**body, "eventType": "COMPLETE", "eventTime": _time(at + timedelta(seconds=2))},
        ]
    return events


def _time(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
