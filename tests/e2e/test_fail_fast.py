"""Failures that should stop a user early do (issue 36, point 4): `serve` and `worker` refuse to start on rules they
could not use, naming the file, line, column and rule; a running serve that sees an invalid edit keeps its last good
rules, logs it once (noticed by its watcher, with no event sent) and shows it in `status`; a Spark command with no
Java says so in one line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
import requests

from tests.support.repository import PROJECT_ROOT
from tests.support.rules import BROKEN_RULES, BROKEN_RULES_PROBLEM, MAPPINGS_PATH
from tests.support.waiting import wait_until

pytestmark = pytest.mark.e2e

BROKEN, PROBLEM = BROKEN_RULES, BROKEN_RULES_PROBLEM
INVALID_EDIT = "changed but cannot be used, so the previous rules stay in force"


def ol2purview(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tools.cli", *args],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )


@pytest.mark.parametrize("command", [("serve", "--port", "0", "--catalog-port", "0"), ("worker",)])
def test_serve_and_worker_refuse_rules_they_could_not_use(tmp_path, command):
    rules = tmp_path / "rules.json"
    rules.write_text(BROKEN)
    data = tmp_path / "data"
    done = ol2purview(
        *command, "--data", str(data), "--storage", "embedded", env={"OL_TO_PURVIEW_MAPPINGS_PATH": str(rules)}
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"ol2purview {command[0]}: the mapping rules cannot be used (fix them, check with `qn-tester lint`): "
        + PROBLEM.format(path=rules)
    ]
    assert "ready" not in done.stdout and not (data / "serve.json").exists()  # nothing was started


def test_a_running_serve_keeps_its_last_good_rules_and_says_so(serve_factory, tmp_path):
    rules = tmp_path / "rules.json"
    shutil.copy(MAPPINGS_PATH, rules)
    serve = serve_factory(env={"OL_TO_PURVIEW_MAPPINGS_PATH": str(rules)})
    good = serve.status()["rules"]
    assert (good["ok"], good["path"], good["reloads"]) == (True, str(rules), 0) and good["rules"] > 10
    rules.write_text(BROKEN)
    # the watcher notices with no event and no status request: the log line is what is waited for
    wait_until(lambda: INVALID_EDIT in serve.output(), timeout=30, what="the invalid edit to be logged")
    bad = serve.status()["rules"]
    assert bad == {
        "ok": False,
        "path": str(rules),
        "rules": good["rules"],
        "reloads": 0,
        "error": PROBLEM.format(path=rules),
    }
    assert serve.status()["rules"] == bad
    shutil.copy(MAPPINGS_PATH, rules)
    os.utime(rules)  # the same size as the first version: a newer time is the change
    wait_until(lambda: "mapping rules reloaded from" in serve.output(), timeout=30, what="the fixed file reloaded")
    assert serve.status()["rules"] == {**good, "reloads": 1}
    assert serve.output().count(INVALID_EDIT) == 1  # logged once, however often it was looked at
    assert serve.output().count("mapping rules reloaded from") == 1


@pytest.mark.parametrize(
    "command",
    [("backfill", "."), ("system-lineage",), ("history", "x", "--since", "2025-01-01", "--until", "2025-01-02")],
)
def test_a_spark_command_without_java_says_what_to_install(tmp_path, command):
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    done = subprocess.run(
        [sys.executable, "-m", "tools.cli", "spark", *command, "--dry-run", str(tmp_path / "o")]
        if command[0] != "history"
        else [sys.executable, "-m", "tools.cli", "spark", *command],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "PATH": str(empty)},
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"ol2purview spark {command[0]}: Spark needs Java 17 or newer and no `java` is on PATH (nor JAVA_HOME set): "
        "install Debian's openjdk-17-jre-headless (`make java` does, as root) or set JAVA_HOME to a Java 17+"
    ]


def test_requeue_right_after_fixing_the_rule_lands_every_message(serve_factory, tmp_path):
    """Issue 36: `requeue` right after fixing a rule sent 2 of 7 messages back to the poison queue. A rule naming a
    type the catalog lacks sends each run's COMPLETE to the poison queue at once; the file is fixed and `requeue
    --all` runs at once, before or after the host has noticed: every message lands, none goes back."""
    from tools.samples.delivery import generated_events, write_jsonl

    runs = 4
    shipped = json.loads(MAPPINGS_PATH.read_text(encoding="utf-8"))
    made_up = {
        "name": "madeUpType",
        "parserConditions": [{"op1": "prefix", "compare": "=", "op2": "abfss"}],
        "qualifiedName": "made://{nameGroups[0]}",
        "purviewDataType": "made_up_type",
    }
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([made_up, *(shipped if isinstance(shipped, list) else shipped["olToPurviewMappings"])]))
    serve = serve_factory(
        env={
            "OL_TO_PURVIEW_MAPPINGS_PATH": str(rules),
            "AzureFunctionsJobHost__extensions__queues__visibilityTimeout": "00:00:01",
        }
    )
    # STARTs first (they write nothing: a START processed after its COMPLETE would be poisoned too)
    events = generated_events(runs, start=600)
    starts = write_jsonl(tmp_path / "starts.jsonl", [e for e in events if e["eventType"] == "START"])
    assert ol2purview("replay", str(starts), "--data", str(serve.data_dir), env={}).returncode == 0
    wait_until(lambda: serve.status()["worker"]["succeeded"] == runs, timeout=60, what="the STARTs processed")
    completes = write_jsonl(tmp_path / "completes.jsonl", [e for e in events if e["eventType"] != "START"])
    assert ol2purview("replay", str(completes), "--data", str(serve.data_dir), env={}).returncode == 0
    wait_until(
        lambda: serve.status()["queues"]["lineage-events"]["poisonCount"] == runs,
        timeout=60,
        what="every COMPLETE moved to the poison queue at once",
    )
    assert serve.status()["worker"]["poisoned"] == runs
    shutil.copy(MAPPINGS_PATH, rules)  # the fix
    requeued = ol2purview("requeue", "--all", "--data", str(serve.data_dir), env={})
    assert requeued.stdout.strip().splitlines()[-1] == (
        f"moved {runs} message(s) from lineage-events-poison to lineage-events"
    )

    def landed() -> bool:
        status = serve.status()
        lineage = status["queues"]["lineage-events"]
        return lineage["approximateCount"] == 0 and not status["worker"]["inFlight"] and lineage["poisonCount"] == 0

    wait_until(landed, timeout=90, what="the requeued messages processed")
    assert serve.status()["worker"]["poisoned"] == runs  # none went back
    processes = requests.get(
        f"{serve.atlas_url}/search/basic", params={"typeName": "databricks_process"}, timeout=10
    ).json()["entities"]
    assert len(processes) == runs
