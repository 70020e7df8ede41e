"""Issue 42, end to end over `ol2purview serve` on both run-state stores: the Purview account people already have.

The embedded catalog is a Purview account: it ships Purview's built-in Databricks types, and holds what the C#
accelerator wrote for one notebook run interactively and once as a job task (../shared/accelerator/README.md: its
qualifiedNames; registered here through the Atlas API as it registered them, with its placeholder types from
../shared/accelerator/Custom_Types.json). `serve` runs with the accelerator's own rule file and its Spark setup (job
namespace `adb-<id>.<shard>#<cluster>`), and the same two runs come as OpenLineage events. Then
`ol2purview migrate accelerator` prints its plan, `--apply` is killed (SIGKILL) in the middle of its first deletion
and run again. Asserted exactly, before and after: one workspace, notebook, job and task; one active process per
owner and output; the job run written (nothing in the poison queue); every typedef the account held byte for byte as
it was; `prune --dry-run` offering only what the connector wrote.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests

from olparser.lineage.databricks_model import model_type_names
from tests.e2e.lineage_helpers import replay, write_events
from tests.support.repository import PROJECT_ROOT
from tests.support.serves import start_serve_on_store
from tests.support.waiting import wait_until
from tools.catalog import CatalogServer
from tools.samples.databricks import Dataset, NotebookRun, events

pytestmark = pytest.mark.e2e

SHARED = PROJECT_ROOT.parent / "shared"
ACCELERATOR = SHARED / "accelerator"
CUSTOM_TYPES = ACCELERATOR / "Custom_Types.json"  # the accelerator's placeholder types
WORKSPACE_ID = "1234567890123456"
HOST = f"adb-{WORKSPACE_ID}.5.azuredatabricks.net"
JOB_NAMESPACE = f"adb-{WORKSPACE_ID}.5#0501-101010-abcd1234"  # the accelerator's cluster setup
WS = f"databricks://{HOST}"
NOTEBOOK_PATH = "/Shared/etl/enrich_orders"
NOTEBOOK = f"{WS}/notebooks/Shared/etl/enrich_orders"
JOB = f"{WS}/jobs/881"
TASK = f"{JOB}/tasks/enrich_orders_task"  # the Jobs API's task key, which the events do not carry
LAKE = "contosolake.dfs.core.windows.net"
ORDERS = f"https://{LAKE}/raw/Sales/Orders"  # scanned
OUTPUT = f"https://{LAKE}/curated/Sales/Orders_Enriched"  # not scanned: the accelerator wrote a placeholder
PLACEHOLDER = ("purview_custom_connector_generic_entity_with_columns", OUTPUT.lower())
STATEMENT = "execute_insert_into_hadoop_fs_relation_command.curated_sales_orders_enriched"


def md5(text: str) -> str:
    return hashlib.md5(text.encode("ascii")).hexdigest().upper()  # noqa: S324 - the accelerator's naming


def accelerator_process(owner: str) -> str:
    """`{owner}/processes/{MD5 of the sorted lower-cased inputs}->{MD5 of the output}` (OlToPurviewParsingService)."""
    return f"{owner}/processes/{md5(ORDERS.lower())}->{md5(OUTPUT)}"


# the connector's processes: named after the runnable as the builder names it (a job run's task: the notebook path,
# the events carrying no task key), written under the runnable the catalog holds (the accelerator's task)
OURS = {
    NOTEBOOK: f"{NOTEBOOK}/processes/{STATEMENT}/{OUTPUT}",
    TASK: f"{JOB}/tasks/Shared/etl/enrich_orders/processes/{STATEMENT}/{OUTPUT}",
}


def _ref(type_name: str, qualified_name: str, relationship: str | None = None) -> dict[str, Any]:
    ref: dict[str, Any] = {"typeName": type_name, "uniqueAttributes": {"qualifiedName": qualified_name}}
    return {**ref, "relationshipType": relationship} if relationship else ref


def the_accelerators_estate() -> list[dict[str, Any]]:
    """What the accelerator wrote for the two runs, as it wrote it (DatabricksToPurviewParser.cs,
    PurviewIngestion.cs): built-in Databricks entities, the scanned input referenced, a lower-cased placeholder for
    the output, and one hash-named process under each runnable."""
    column_mapping = json.dumps(
        [
            {
                "DatasetMapping": {"Source": ORDERS, "Sink": PLACEHOLDER[1]},
                "ColumnMapping": [{"Source": "id", "Sink": "id"}, {"Source": "amount", "Sink": "amount"}],
            }
        ]
    )

    def process(owner_type: str, owner: str) -> dict[str, Any]:
        return {
            "typeName": "databricks_process",
            "attributes": {
                "qualifiedName": accelerator_process(owner),
                "name": NOTEBOOK_PATH + "/curated/Sales/Orders_Enriched",
                "inputs": [_ref("azure_datalake_gen2_path", ORDERS)],
                "outputs": [_ref(*PLACEHOLDER)],
                "columnMapping": column_mapping,
                "sparkPlan": "{}",
            },
            "relationshipAttributes": {"task": _ref(owner_type, owner, "databricks_runnable_processes")},
        }

    return [
        {"typeName": "databricks_workspace", "attributes": {"qualifiedName": WS, "name": HOST}},
        {
            "typeName": "databricks_notebook",
            "attributes": {
                "qualifiedName": NOTEBOOK,
                "name": "enrich_orders",
                "clusterName": "etl",
                "user": "ana@contoso.com",
                "sparkVersion": "3.3.0",
            },
            "relationshipAttributes": {"workspace": _ref("databricks_workspace", WS, "databricks_workspace_notebooks")},
        },
        {
            "typeName": "databricks_job",
            "attributes": {"qualifiedName": JOB, "name": "Daily sales", "jobId": 881, "creatorUsersName": "ana"},
            "relationshipAttributes": {"workspace": _ref("databricks_workspace", WS, "databricks_workspace_jobs")},
        },
        {
            "typeName": "databricks_notebook_task",
            "attributes": {
                "qualifiedName": TASK,
                "name": "enrich_orders_task",
                "jobId": 881,
                "clusterId": "0501-101010-abcd1234",
                "sparkVersion": "3.3.0",
                "notebookPath": NOTEBOOK_PATH,
                "baseParameters": {},
            },
            "relationshipAttributes": {
                "job": _ref("databricks_job", JOB, "databricks_job_job_tasks"),
                "notebook": _ref("databricks_notebook", NOTEBOOK, "databricks_notebook_notebook_tasks"),
            },
        },
        {"typeName": "azure_datalake_gen2_path", "attributes": {"qualifiedName": ORDERS, "name": "Orders"}},
        {
            "typeName": PLACEHOLDER[0],
            "attributes": {
                "qualifiedName": PLACEHOLDER[1],
                "name": "orders_enriched",
                "data_type": "azure_datalake_gen2_path",
                "description": "Data Assets orders_enriched",
            },
        },
        process("databricks_notebook", NOTEBOOK),
        process("databricks_notebook_task", TASK),
    ]


def the_runs() -> list[dict[str, Any]]:
    """The notebook run interactively and as task of job 881, as openlineage-spark sends them."""
    started = datetime(2026, 11, 30, 6, 0, tzinfo=timezone.utc)
    runs = []
    for number, extra in enumerate(({}, {"spark.databricks.job.id": "881", "spark.databricks.job.type": "notebook"})):
        runs += events(
            NotebookRun(
                run_id=f"0192f000-0000-7000-8000-00000000004{number}",
                started=started.replace(hour=6 + number),
                statement=STATEMENT,
                inputs=(Dataset(f"abfss://raw@{LAKE}", "/Sales/Orders"),),
                output=Dataset(f"abfss://curated@{LAKE}", "/Sales/Orders_Enriched"),
                notebook=NOTEBOOK_PATH,
                job_namespace=JOB_NAMESPACE,
                workspace_id=WORKSPACE_ID,
                mounts=None,
                environment_extra=extra,
            )
        )
    return runs


@pytest.fixture
def account(tmp_path: Path) -> Iterator[CatalogServer]:
    """An embedded catalog holding the accelerator's types and entities, written through the Atlas API."""
    server = CatalogServer(tmp_path / "catalog.sqlite").start()
    custom = json.loads(CUSTOM_TYPES.read_text())
    requests.post(f"{server.atlas_url}/types/typedefs", json=custom, timeout=10).raise_for_status()
    body = {"entities": [{**e, "guid": f"-{i}"} for i, e in enumerate(the_accelerators_estate(), 1)]}
    requests.post(f"{server.atlas_url}/entity/bulk", json=body, timeout=10).raise_for_status()
    yield server
    server.stop()


def typedef_bytes(atlas_url: str) -> dict[str, bytes]:
    """Every typedef the catalog holds, as it answers it (by name)."""
    headers = requests.get(f"{atlas_url}/types/typedefs/headers", timeout=10).json()
    return {h["name"]: requests.get(f"{atlas_url}/types/typedef/name/{h['name']}", timeout=10).content for h in headers}


def definition(answer: bytes) -> dict[str, Any]:
    """A typedef as defined: what the catalog answers but `subTypes`, which it derives from the other types (a type
    the connector defines on `Asset` adds to Asset's)."""
    return {k: v for k, v in json.loads(answer).items() if k != "subTypes"}


def entities(atlas_url: str, *type_names: str) -> list[tuple[str, str]]:
    """(typeName, qualifiedName) of the active entities of these types (and their subtypes), each once, sorted."""
    found = set()
    for type_name in type_names:
        body = {"typeName": type_name, "excludeDeletedEntities": True, "limit": 1000}
        answer = requests.post(f"{atlas_url}/search/basic", json=body, timeout=10).json()
        found |= {(e["typeName"], e["attributes"]["qualifiedName"]) for e in answer.get("entities") or []}
    return sorted(found)


def cli(serve, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "tools.cli", *args, "--data", str(serve.data_dir)]
    return subprocess.run(
        command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, **env}
    )


def owners_and_processes(atlas_url: str) -> list[tuple[str, str]]:
    return entities(
        atlas_url,
        "databricks_workspace",
        "databricks_notebook",
        "databricks_job",
        "databricks_notebook_task",
        "databricks_job_task",
        "databricks_process",
        PLACEHOLDER[0],
    )


@pytest.mark.parametrize("kind", ["sqlite", "table"])
def test_the_accelerators_estate_is_written_with_and_taken_over(kind, account, tmp_path):
    atlas_url = account.atlas_url
    held = typedef_bytes(atlas_url)
    env = {
        "ATLAS_ENDPOINT": atlas_url,
        "OL_TO_PURVIEW_MAPPINGS_PATH": str(ACCELERATOR / "mappings" / "OlToPurviewMappings.json"),
        "RELINK_TIMER_SCHEDULE": "0 0 0 1 1 *",  # the take-overs here retire at --apply or when a run writes
    }
    serve = start_serve_on_store(kind, tmp_path / "serve", env)
    try:
        assert "TYPE_PREFIX" not in serve.output()
        replay(serve, write_events(tmp_path / "events", *the_runs()))
        status = serve.wait_until_processed(timeout=120)
        assert status["queues"]["lineage-events"]["poisonCount"] == 0  # the job run was written

        # written with the accelerator's workspace, notebook, job and task; its processes still beside ours
        estate = owners_and_processes(atlas_url)
        assert estate == sorted(
            [
                ("databricks_workspace", WS),
                ("databricks_notebook", NOTEBOOK),
                ("databricks_job", JOB),
                ("databricks_notebook_task", TASK),
                ("databricks_process", accelerator_process(NOTEBOOK)),
                ("databricks_process", accelerator_process(TASK)),
                ("databricks_process", OURS[NOTEBOOK]),
                ("databricks_process", OURS[TASK]),
                PLACEHOLDER,
            ]
        )
        cli_env = {"RUN_STATE_STORE": kind}
        prune = cli(serve, "prune", "--older-than", "0", "--dry-run", env=cli_env)
        assert prune.returncode == 0, prune.stderr
        assert prune.stdout.splitlines()[1:] == [
            f"  databricks_process  {OURS[TASK]}",
            f"  databricks_process  {OURS[NOTEBOOK]}",
        ]

        plan = cli(serve, "migrate", "accelerator", env=cli_env)
        assert plan.returncode == 0, plan.stderr
        assert plan.stdout.splitlines() == [
            f"{atlas_url}: the accelerator's estate: 2 processes, 1 placeholders, under 4 workspaces, notebooks, "
            "jobs and tasks",
            "Taken over: written by ol2purview from now on, unchanged (4):",
            f"  databricks_job  {JOB}",
            f"  databricks_notebook  {NOTEBOOK}",
            f"  databricks_notebook_task  {TASK}",
            f"  databricks_workspace  {WS}",
            "Retired: ol2purview's process of the same owner and output replaces it (2):",
            f"  {accelerator_process(TASK)}",
            f"    -> {OURS[TASK]}",
            f"  {accelerator_process(NOTEBOOK)}",
            f"    -> {OURS[NOTEBOOK]}",
            "Taken over, replaced by the next run of its code: none",
            "Repointed to the real dataset (inputs, outputs, columnMapping), then retired: none",
            "Placeholders retired: no process uses them any more (1):",
            f"  {PLACEHOLDER[1]}",
            "Placeholders kept until the processes that use them are replaced: none",
            "Nothing was changed: `ol2purview migrate accelerator --apply` carries it out.",
        ]
        assert owners_and_processes(atlas_url) == estate  # a plan changes nothing

        # --apply killed in the middle of its first deletion, then run again
        requests.post(f"{account.url}/_ol2purview/calls/reset", timeout=10).raise_for_status()
        requests.put(f"{account.url}/_ol2purview/faults", data="latency:1500ms", timeout=10).raise_for_status()
        command = [
            sys.executable,
            "-m",
            "tools.cli",
            "migrate",
            "accelerator",
            "--apply",
            "--data",
            str(serve.data_dir),
        ]
        apply = subprocess.Popen(command, cwd=PROJECT_ROOT, env={**os.environ, **cli_env}, stdout=subprocess.DEVNULL)

        def deleting() -> bool:
            calls = requests.get(f"{account.url}/_ol2purview/calls", timeout=10).json()["byRoute"]
            return calls.get("DELETE /entity/bulk", 0) > 0

        wait_until(deleting, timeout=120, interval=0.05)
        apply.send_signal(signal.SIGKILL)
        apply.wait(timeout=30)
        requests.put(f"{account.url}/_ol2purview/faults", data="none", timeout=10).raise_for_status()
        # the deletion the killed process sent may land before, during or after the rerun: each is a crash it finishes
        again = cli(serve, "migrate", "accelerator", "--apply", env=cli_env)
        assert again.returncode == 0, again.stderr

        assert owners_and_processes(atlas_url) == sorted(
            [
                ("databricks_workspace", WS),
                ("databricks_notebook", NOTEBOOK),
                ("databricks_job", JOB),
                ("databricks_notebook_task", TASK),
                ("databricks_process", OURS[NOTEBOOK]),
                ("databricks_process", OURS[TASK]),
            ]
        )
        after = typedef_bytes(atlas_url)
        databricks = sorted(
            model_type_names() | {d["name"] for d in json.loads(CUSTOM_TYPES.read_text())["entityDefs"]}
        )
        assert len(databricks) == 17 + 2 and {n: after[n] for n in databricks} == {n: held[n] for n in databricks}
        assert {n: definition(after[n]) for n in held} == {n: definition(held[n]) for n in held}
        prune = cli(serve, "prune", "--older-than", "0", "--dry-run", env=cli_env)
        assert prune.stdout.splitlines()[1:] == [
            f"  databricks_process  {OURS[TASK]}",
            f"  databricks_process  {OURS[NOTEBOOK]}",
        ]
        nothing_left = cli(serve, "migrate", "accelerator", env=cli_env)
        assert nothing_left.stdout.splitlines()[0] == (
            f"{atlas_url}: the accelerator's estate: 0 processes, 0 placeholders, under 0 workspaces, notebooks, "
            "jobs and tasks"
        )
        # the run metadata on Purview's databricks_process is the connector's business metadata
        process = requests.get(
            f"{atlas_url}/entity/uniqueAttribute/type/databricks_process",
            params={"attr:qualifiedName": OURS[TASK]},
            timeout=10,
        ).json()["entity"]
        assert "lastRunId" not in process["attributes"]
        assert process["businessAttributes"]["ol2purview"]["lastRunId"] == "0192f000-0000-7000-8000-000000000041"
        assert process["relationshipAttributes"]["task"]["uniqueAttributes"]["qualifiedName"] == TASK
    finally:
        serve.stop()
