"""End to end: the tools find the running `ol2purview serve` by themselves (worker, requeue, replay), the worker logs
each event's own type, an unknown catalog type is poisoned at once naming its rule, and an edited rule file is used
without a restart."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import requests

from olparser.adapters.delivery.queues import AzureQueueService
from tests.e2e.lineage_helpers import Atlas
from tests.support.azurite_fixture import require_azurite
from tests.support.repository import PROJECT_ROOT
from tests.support.rules import MAPPINGS_PATH
from tests.support.shared_events import real_event_files
from tests.support.waiting import wait_until
from tools.functions_host.launcher import ServeHandle

pytestmark = pytest.mark.e2e
SAMPLE_APP = PROJECT_ROOT / "tests" / "unit" / "functions_host" / "sample_app" / "function_app.py"
LAKE = "abfss://raw@lake.dfs.core.windows.net"


def tool(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`ol2purview ...` as a user runs it: no AzureWebJobsStorage, ATLAS_ENDPOINT or key in the environment."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("AzureWebJobsStorage", "ATLAS_ENDPOINT", "PURVIEW_ACCOUNT_NAME", "OL2PURVIEW_FUNCTION_KEY")
    }
    return subprocess.run(
        [sys.executable, "-m", "tools.cli", *args],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**clean, **(env or {})},
    )


def kafka_run(event_type: str, run_id: str, event_time: str, topic: str = "orders") -> dict:
    """A Spark run reading a Kafka topic into the lake (no default rule maps Kafka)."""
    return {
        "eventType": event_type,
        "eventTime": event_time,
        "producer": "https://github.com/OpenLineage/OpenLineage",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run_id},
        "job": {"namespace": "spark", "name": "kafka_to_lake"},
        "inputs": [{"namespace": "kafka://broker:9092", "name": topic}],
        "outputs": [{"namespace": LAKE, "name": f"/curated/{topic}"}],
    }


def kafka_rule(type_name: str, name: str = "kafkaTopic") -> dict:
    return {
        "name": name,
        "parserConditions": [{"op1": "prefix", "compare": "=", "op2": "kafka"}],
        "qualifiedName": "kafka://{nameSpcBodyParts[0]}/{nameGroups[0]}",
        "purviewDataType": type_name,
    }


def config_with(tmp_path: Path, *extra: dict) -> Path:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps([*extra, *json.loads(MAPPINGS_PATH.read_text())]))
    return path


def test_replay_defaults_to_the_running_serve_and_its_kept_key(serve_factory):
    handle = serve_factory(key=None, worker=False)
    done = tool("replay", str(real_event_files()[0]), "--data", str(handle.data_dir))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == f"1 events to {handle.url}/api/v1/lineage: 1 accepted, 0 refused"


def test_replay_with_a_path_in_the_url_does_not_double_it(serve):
    done = tool("replay", str(real_event_files()[0]), "--url", f"{serve.url}/api/v1/lineage", f"--key={serve.key}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == f"1 events to {serve.url}/api/v1/lineage: 1 accepted, 0 refused"


def test_replay_without_url_and_without_a_running_serve_says_what_to_pass(tmp_path):
    done = tool("replay", str(real_event_files()[0]), "--data", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"ol2purview replay: no --url given and no `ol2purview serve` is running on {tmp_path}: start it, or pass "
        "--url URL --key KEY (or --data DIR of the running serve)"
    )


@pytest.mark.azurite
def test_requeue_finds_the_azurite_of_the_running_serve(serve_factory):
    require_azurite()
    handle = serve_factory(key="k", storage="azurite", worker=False)
    service = AzureQueueService(handle.storage_connection)
    service.queue("lineage-events-poison").send(json.dumps({"v": 1, "id": "envelope-7", "runId": "run-7"}))
    done = tool("requeue", "--all", "--data", str(handle.data_dir))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "moved 1 message(s) from lineage-events-poison to lineage-events"
    assert service.queue("lineage-events").approximate_count() == 1


def test_requeue_without_storage_or_serve_explains_what_it_tried(tmp_path):
    done = tool("requeue", "--all", "--data", str(tmp_path), env={"OL2PURVIEW_DATA_DIR": str(tmp_path)})
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "no `ol2purview serve` is running on the data folder and AzureWebJobsStorage is not set, so this tried "
        "Azurite on its default ports: start `ol2purview serve` (or pass --data DIR, --connection, --embedded)"
    )


@pytest.fixture
def worker_of():
    """Start `ol2purview worker --data <serve's data>` with no storage or catalog settings: it must find them."""
    started = []

    def start(handle: ServeHandle, *args: str) -> tuple[subprocess.Popen, Path]:
        log = handle.data_dir / f"worker-{len(started)}.log"
        clean = {k: v for k, v in os.environ.items() if k not in ("AzureWebJobsStorage", "ATLAS_ENDPOINT")}
        with open(log, "wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "tools.cli", "worker", "--data", str(handle.data_dir), *args],
                cwd=PROJECT_ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**clean, "PYTHONUNBUFFERED": "1"},
            )
        started.append(process)
        wait_until(lambda: "ready: worker" in log.read_text() or process.poll() is not None, 30, what="worker ready")
        assert process.poll() is None, log.read_text()
        return process, log

    yield start
    for process in started:
        process.terminate()
        process.wait(30)


def test_a_worker_joins_the_storage_and_catalog_of_the_running_serve_and_logs_each_events_own_type(
    serve_factory, worker_of, tmp_path
):
    handle = serve_factory(key="k", worker=False)
    _process, log = worker_of(handle)
    output = log.read_text()
    assert (
        f"using the storage and catalog of ol2purview serve (pid {handle.process.pid}, {handle.url})"
        in output.splitlines()
    )
    assert "catalog page:" not in output  # it did not start a catalog of its own
    run_id = str(uuid.uuid4())
    complete = kafka_run("COMPLETE", run_id, "2026-01-01T00:01:00Z")
    start = kafka_run("START", run_id, "2026-01-01T00:00:00Z")  # arrives after the COMPLETE
    for event in (complete, start):
        response = requests.post(f"{handle.url}/api/v1/lineage", params={"code": "k"}, json=event, timeout=10)
        assert response.status_code == 200
        handle.wait_until_processed()

    def processed() -> list[str]:
        return [
            line.split("Processed ", 1)[1].split(" status=")[0]
            for line in log.read_text().splitlines()
            if f"Processed runId={run_id}" in line
        ]

    wait_until(lambda: len(processed()) == 2, 30, what="both events logged")
    assert processed() == [f"runId={run_id} eventType=COMPLETE", f"runId={run_id} eventType=START"]
    assert ("openlineage_dataset", "kafka://broker:9092/orders") in Atlas(handle.atlas_url).keys()


def test_a_worker_runs_the_timer_triggers(serve_factory, worker_of):
    handle = serve_factory(key="k", worker=False, extra_args=("--app", str(SAMPLE_APP)))
    _process, log = worker_of(handle, "--app", str(SAMPLE_APP), "--log-level", "debug")  # "ran" is a DEBUG line
    assert "timer triggers: every_second (* * * * * *) (running)" in log.read_text().splitlines()
    wait_until(lambda: log.read_text().count("timer 'every_second' ran") >= 2, 30, what="two timer runs")


def test_an_unknown_catalog_type_is_poisoned_at_once_naming_the_rule(serve_factory, tmp_path):
    rules = config_with(tmp_path, kafka_rule("kafka_topic_made_up"))
    handle = serve_factory(key="k", env={"OL_TO_PURVIEW_MAPPINGS_PATH": str(rules)})
    run_id = str(uuid.uuid4())
    response = requests.post(
        f"{handle.url}/api/v1/lineage",
        params={"code": "k"},
        json=kafka_run("COMPLETE", run_id, "2026-01-01T00:01:00Z"),
        timeout=10,
    )
    assert response.status_code == 200
    status = wait_until(
        lambda: (s := handle.status())["queues"]["lineage-events"]["poisonCount"] == 1 and s,
        30,
        what="the message in the poison queue",
    )
    # one attempt, poisoned; not 5 attempts 30 s apart (each retried attempt counts as failed)
    assert (status["worker"]["failed"], status["worker"]["poisoned"]) == (0, 1)
    assert (
        f"runId={run_id} moved to lineage-events-poison at once, as no retry can fix it: the catalog has no "
        "entity type 'kafka_topic_made_up' (produced by mapping rule(s) 'kafkaTopic')"
    ) in handle.output()


def test_an_edited_rule_file_is_used_without_a_restart(serve_factory, tmp_path):
    rules = config_with(tmp_path)
    handle = serve_factory(key="k", env={"OL_TO_PURVIEW_MAPPINGS_PATH": str(rules)})
    atlas = Atlas(handle.atlas_url)
    requests.post(
        f"{handle.url}/api/v1/lineage",
        params={"code": "k"},
        json=kafka_run("COMPLETE", str(uuid.uuid4()), "2026-01-01T00:01:00Z", "before"),
        timeout=10,
    )
    handle.wait_until_processed()
    assert ("openlineage_dataset", "kafka://broker:9092/before") in atlas.keys()  # no rule yet: a placeholder
    rules.write_text(json.dumps([kafka_rule("azure_datalake_gen2_path"), *json.loads(rules.read_text())]))

    def mapped_by_the_new_rule() -> bool:
        requests.post(
            f"{handle.url}/api/v1/lineage",
            params={"code": "k"},
            json=kafka_run("COMPLETE", str(uuid.uuid4()), "2026-01-01T00:02:00Z", "after"),
            timeout=10,
        )
        handle.wait_until_processed()
        return ("azure_datalake_gen2_path", "kafka://broker/after") in atlas.keys()

    wait_until(mapped_by_the_new_rule, timeout=30, interval=0.5, what="the new rule in force")
    assert "mapping rules reloaded from" in handle.output()
    assert "Traceback" not in handle.output()
