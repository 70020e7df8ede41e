"""One rule file (issue 43): in a checkout, a rule added to config/OlToPurviewMappings.json as the mapping guide says
is what every command reads, and each says so: `qn-tester` (mapping and `lint`), `ol2purview serve` (banner and
status), the Function's runtime (function_app.py imported as the Functions host does), and `ol2purview spark backfill`
(whose dry run plans the dataset under the new rule). Before, `serve` read config/ while `qn-tester` and `lint` read a
second copy in olparser/naming/shipped/.

Everything runs in a copy of the repository (a checkout as a clone has it) with no OL_TO_PURVIEW_MAPPINGS_PATH in the
environment, so the default rule is what is tested."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.support.repository import repository_copy

KAFKA_RULE = {
    "name": "kafkaTopic",
    "parserConditions": [{"op1": "prefix", "compare": "=", "op2": "kafka"}],
    "qualifiedName": "kafka://{nameSpcBodyParts[0]}/{nameGroups[0]}",
    "purviewDataType": "kafka_topic",
}
RULES_SHOWN = "config/OlToPurviewMappings.json"


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository whose rule file has one rule more (first), as a user adds one."""
    root = repository_copy(tmp_path_factory.mktemp("checkout") / "ol2purview")
    rules_file = root / "config" / "OlToPurviewMappings.json"
    rules = json.loads(rules_file.read_text(encoding="utf-8"))
    assert len(rules) == 55
    rules_file.write_text(json.dumps([KAFKA_RULE, *rules], indent=2), encoding="utf-8")
    return root


def env_of(checkout: Path) -> dict[str, str]:
    dropped = ("OL_TO_PURVIEW_MAPPINGS_PATH", "OlToPurviewMappings", "OL2PURVIEW_DATA_DIR", "ATLAS_ENDPOINT")
    environment = {k: v for k, v in os.environ.items() if k not in dropped}
    return {**environment, "PYTHONPATH": str(checkout), "PYTHONUNBUFFERED": "1"}


def run(checkout: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=checkout, env=env_of(checkout), capture_output=True, text=True, timeout=300
    )


def test_qn_tester_maps_with_the_edited_file_and_says_so(checkout: Path):
    done = run(checkout, "-m", "tools.qn_tester", "--namespace", "kafka://broker:9092", "--name", "orders")
    assert (done.returncode, done.stderr) == (0, f"qn-tester: rules from {RULES_SHOWN} (56 rules)\n")
    assert json.loads(done.stdout) == {"QualifiedName": "kafka://broker/orders", "PurviewType": "kafka_topic"}
    lint = run(checkout, "-m", "tools.qn_tester", "lint")
    assert (lint.returncode, lint.stdout) == (0, f"{RULES_SHOWN}: no problems found\n"), lint.stderr


def test_the_function_app_maps_with_the_edited_file(checkout: Path):
    code = (
        "import function_app\n"
        "from olparser.adapters.runtime import process_runtime\n"
        "engine = process_runtime().engine()\n"
        "print(engine.status()['path'], engine.status()['rules'], engine.map('kafka://b:9092', 'o').qualified_name)\n"
    )
    done = run(checkout, "-c", code)
    assert (done.returncode, done.stdout) == (0, f"{RULES_SHOWN} 56 kafka://b/o\n"), done.stderr[-2000:]


def test_spark_backfill_plans_with_the_edited_file_and_says_so(checkout: Path, tmp_path: Path):
    (tmp_path / "in").mkdir()
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2026-05-01T10:00:00Z",
        "run": {"runId": "0195f0c2-1111-7000-8000-000000000001"},
        "job": {"namespace": "spark-jobs", "name": "app.execute_insert.out"},
        "inputs": [{"namespace": "kafka://broker:9092", "name": "orders"}],
        "outputs": [{"namespace": "abfss://silver@lake.dfs.core.windows.net", "name": "/out"}],
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.30.0/integration/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }
    (tmp_path / "in" / "events.jsonl").write_text(json.dumps(event) + "\n")
    planned = tmp_path / "planned.jsonl"
    done = run(
        checkout, "-m", "tools.cli", "spark", "backfill", str(tmp_path / "in"), "--single-process", "--dry-run",
        str(planned), "--data", str(tmp_path / "data"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"ol2purview spark backfill: mapping rules from {RULES_SHOWN}" in done.stderr.splitlines()
    entities = [json.loads(line) for line in planned.read_text().splitlines()]
    assert [e["attributes"]["qualifiedName"] for e in entities if e["typeName"] == "kafka_topic"] == [
        "kafka://broker/orders"
    ]


def test_serve_maps_with_the_edited_file_and_says_so(checkout: Path, tmp_path: Path):
    master = "one-rule-file-master-key-0123"
    process = subprocess.Popen(
        [sys.executable, "-m", "tools.cli", "serve", "--port", "0", "--catalog-port", "0", "--storage", "embedded",
         "--no-worker", "--data", str(tmp_path / "data"), f"--master-key={master}"],
        cwd=checkout, env=env_of(checkout), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        lines: list[str] = []
        for line in process.stdout or ():
            lines.append(line.rstrip("\n"))
            if line.startswith("ready:"):
                break
        assert lines and lines[-1].startswith("ready:"), "\n".join(lines)
        assert f"mapping rules: {RULES_SHOWN} (56 rules)" in lines
        url = lines[-1].split()[1].rstrip("/")
        status = requests.get(f"{url}/admin/ol2purview/status", headers={"x-functions-key": master}, timeout=30)
        assert (status.json()["rules"]["path"], status.json()["rules"]["rules"]) == (RULES_SHOWN, 56)
    finally:
        process.terminate()
        process.wait(timeout=60)
