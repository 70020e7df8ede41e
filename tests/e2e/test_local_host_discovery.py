"""End to end: a second `ol2purview serve` needs only `--data DIR` (the default ports taken, it picks free ones and
says so), and every command that needs the catalog or the host finds the serve of its data folder with no flags
(`OL2PURVIEW_DATA_DIR` names the folder, as a user's shell would)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from olparser.adapters.catalog import load_typedefs
from olparser.settings import TYPEDEFS_DIR
from tests.support.repository import PROJECT_ROOT
from tests.support.rules import MAPPINGS_PATH
from tests.support.serves import DEFAULT_PORTS_GROUP
from tests.support.shared_events import SHARED_OPENLINEAGE
from tools.functions_host.launcher import ServeHandle, start_serve

TYPE_COUNT = sum(len(defs) for defs in load_typedefs(TYPEDEFS_DIR).values())  # every definition the connector ships

pytestmark = [pytest.mark.e2e, DEFAULT_PORTS_GROUP]
CLL = SHARED_OPENLINEAGE / "sequences" / "compat-tests__CLL"
TABLE = "file:/tmp/cll_test/default.tbl1"
SERVE_SETTINGS = (
    "AzureWebJobsStorage",
    "ATLAS_ENDPOINT",
    "PURVIEW_ACCOUNT_NAME",
    "OL2PURVIEW_FUNCTION_KEY",
    "OL2PURVIEW_MASTER_KEY",
    "OL2PURVIEW_DATA_DIR",
)


@pytest.fixture(scope="module")
def two_serves(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServeHandle, ServeHandle]]:
    """Two serves started as a user starts them: no port flags, each with its own data folder."""
    first = start_serve(tmp_path_factory.mktemp("first"), default_ports=True)
    try:
        second = start_serve(tmp_path_factory.mktemp("second"), default_ports=True)
        try:
            yield first, second
        finally:
            assert second.stop() == 0, second.output()
    finally:
        assert first.stop() == 0, first.output()


def command(program: str, *args: str, data_dir: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`ol2purview ...` or `qn-tester ...` with no flag naming a catalog, host, key or storage: only the data folder
    in OL2PURVIEW_DATA_DIR (and the tests' copy of the rules)."""
    clean = {k: v for k, v in os.environ.items() if k not in SERVE_SETTINGS}
    module = {"ol2purview": "tools.cli", "qn-tester": "tools.qn_tester"}[program]
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            **clean,
            "OL2PURVIEW_DATA_DIR": str(data_dir),
            "OL_TO_PURVIEW_MAPPINGS_PATH": str(MAPPINGS_PATH),
            **(env or {}),
        },
    )


def test_a_second_serve_needs_only_its_data_folder_and_says_which_ports_it_took(two_serves):
    first, second = two_serves
    assert (second.url != first.url, second.catalog_url != first.catalog_url) == (True, True)
    lines = second.output().splitlines()
    assert f"port 7071 on 127.0.0.1 is in use (another `ol2purview serve`?): listening on {second.port}" in lines, (
        lines[:3]
    )
    catalog_port = int(second.catalog_url.rsplit(":", 1)[1])
    assert (
        f"port 21000 is in use (another `ol2purview serve`?): the embedded catalog listens on {catalog_port}" in lines
    ), lines[:3]


@pytest.fixture(scope="module")
def replayed(two_serves) -> ServeHandle:
    """The second serve, after `ol2purview replay` (no flags) sent it the compat-tests CLL run."""
    _first, second = two_serves
    done = command("ol2purview", "replay", str(CLL), data_dir=second.data_dir)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"9 events to {second.url}/api/v1/lineage: 9 accepted, 0 refused"
    second.wait_until_processed()
    return second


def test_columns_finds_the_catalog_of_the_serve(replayed):
    done = command("ol2purview", "columns", TABLE, "agg", "--direction", "up", data_dir=replayed.data_dir)
    assert done.returncode == 0, done.stderr
    assert (
        "  -1  file:/tmp/cll_test/default.cll_source2 . c  --AGGREGATION-->  file:/tmp/cll_test/default.tbl1 . "
        "agg  via execute_create_hive_table_as_select_command.default_tbl1"
    ) in done.stdout.splitlines()


def test_history_finds_the_endpoint_and_key_of_the_serve(replayed):
    done = command(
        "ol2purview", "history", TABLE, "--since", "2020-01-01T00:00:00Z", "--json", data_dir=replayed.data_dir
    )
    # the endpoint answered with the serve's key (a wrong one is a 401, exit 1): the CLL run is older than
    # RUN_HISTORY_DAYS, so no run of the history wrote the table, which is a 404 (exit 2), not an empty answer
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.startswith(
        "ol2purview history: 404 no run in the history read or wrote file:/tmp/cll_test/default.tbl1 "
        "(parameter qualifiedName)"
    )


@pytest.mark.parametrize(
    "args, first_line",
    [
        (("prune", "--older-than", "36500", "--dry-run"), "{atlas}: would remove 0 processes last run before "),
        (("typedefs",), f"{{atlas}}: up to date ({TYPE_COUNT} types, 1 call)"),  # serve registered them when it started
        (("requeue", "--all", "--dry-run"), "would move 0 message(s) from lineage-events-poison to lineage-events"),
    ],
)
def test_catalog_and_queue_commands_find_the_serve(replayed, args, first_line):
    done = command("ol2purview", *args, data_dir=replayed.data_dir)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith(first_line.format(atlas=replayed.atlas_url)), done.stdout


def test_qn_tester_lint_checks_the_types_of_the_catalog_of_the_serve(replayed, tmp_path: Path):
    rules = tmp_path / "rules.json"
    rules.write_text(
        '[{"name": "k", "parserConditions": [{"op1": "prefix", "compare": "=", "op2": "kafka"}], '
        '"qualifiedName": "kafka://{nameGroups[0]}", "purviewDataType": "kafka_topic_made_up"}]'
    )
    done = command("qn-tester", "lint", "--config", str(rules), "--catalog", data_dir=replayed.data_dir)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0].startswith(
        f"[type] rule 0 'k': purviewDataType 'kafka_topic_made_up' is not an entity type of the catalog at "
        f"{replayed.atlas_url} "
    )


@pytest.mark.parametrize(
    "args", [("spark", "backfill", str(CLL), "--single-process"), ("spark", "remap", "--single-process")]
)
def test_spark_backfill_and_remap_find_the_catalog_and_the_archive_of_the_serve(replayed, args):
    calls_before = replayed.catalog_calls()["total"]
    done = command("ol2purview", *args, data_dir=replayed.data_dir)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"ol2purview spark {args[1]}"
    assert [" ".join(line.split()) for line in lines if "events: read" in line or "runs: with lineage" in line] == [
        "events: read 9",
        "runs: with lineage 3",
    ]
    assert replayed.catalog_calls()["total"] > calls_before  # it asked the serve's catalog, not another


def test_catalog_scan_registers_in_the_catalog_of_the_serve(replayed, tmp_path: Path):
    (tmp_path / "sales").mkdir()
    (tmp_path / "sales" / "part-0.csv").write_text("x\n")
    done = command(
        "ol2purview",
        "catalog",
        "scan",
        str(tmp_path),
        "--account",
        "lake",
        "--container",
        "raw",
        data_dir=replayed.data_dir,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith(f"registered in {replayed.atlas_url} ")


def test_status_finds_the_serve(replayed):
    """The fixture's serve was given its master key (start_serve passes one): the user's shell has it as
    OL2PURVIEW_MASTER_KEY; the key kept in the data folder is used by the README test (tests/e2e/test_readme.py)."""
    import json

    done = command(
        "ol2purview", "status", data_dir=replayed.data_dir, env={"OL2PURVIEW_MASTER_KEY": replayed.master_key}
    )
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert (
        status["state"],
        status["storage"],
        status["queues"]["lineage-events"]["approximateCount"],
        status["catalog"]["atlasUrl"],
    ) == ("Running", "embedded", 0, replayed.atlas_url)


def test_status_with_a_function_key_is_refused_saying_so(replayed):
    done = command("ol2purview", "status", f"--key={replayed.key}", data_dir=replayed.data_dir)
    assert done.returncode == 1
    assert done.stderr.startswith(f"ol2purview status: {replayed.url}/admin/ol2purview/status answered 401: ")
