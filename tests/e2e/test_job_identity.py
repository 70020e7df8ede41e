"""Issue 35, stable job identity, end to end over `ol2purview serve` (events sent with openlineage-python, the
embedded catalog read through the Atlas API), on each run-state store: two sessions of one Fabric notebook make one
process, and a deployment upgraded from the release before the stable identity (run from its own source tree on the
same data folder) replaces the session-named processes that release wrote.

Events: tools/samples/notebooks.py, shaped as DataHub's Fabric fixture (openlineage-spark 1.26.0 in Fabric Runtime
1.3, `fabric_runtime_notebook_events.jsonl`): job `{notebook}_{session}.{action}.{table}`, `spark_properties` with the
`trident.artifact.*` keys."""

from __future__ import annotations

import secrets
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest

from tests.e2e.lineage_helpers import Atlas, refs, replay, write_events
from tests.support.repository import PROJECT_ROOT
from tests.support.serves import STORAGE_OF_RUN_STATE_STORE
from tools.functions_host.launcher import start_serve
from tools.samples.notebooks import CTAS, FABRIC_NAMESPACE, FABRIC_NOTEBOOK_ID, T0, fabric_ctas_run, session_job

pytestmark = pytest.mark.e2e

RELEASE_BEFORE = "571b3bf3fa7b1df4e48d3cab7e151ee262eaec36"  # main before the stable job identity
SESSIONS = (
    "00000000-1111-4222-8333-444444444444",
    "9b2f6c1e-7d4a-4c3b-a5e8-0f1d2c3b4a59",
    "5d0c3e2a-1f4b-4a6c-9e8d-7b6a5c4d3e2f",
)
OWNER = f"spark://{FABRIC_NAMESPACE}/notebooks/{FABRIC_NOTEBOOK_ID}"


def _send_sessions(serve, folder: Path, numbers: range) -> None:
    events = [e for n in numbers for e in fabric_ctas_run(SESSIONS[n], started=T0 + timedelta(hours=n))]
    replay(serve, write_events(folder, *events))
    serve.wait_until_processed()


def _notebook_entities(atlas: Atlas) -> list[dict]:
    return [e for e in atlas.all_entities() if e["typeName"] in ("spark_application", "spark_process")]


def _start(data: Path, kind: str, root: Path = PROJECT_ROOT):
    if kind == "table":
        from tests.support.azurite_fixture import require_azurite

        require_azurite()
    return start_serve(
        data,
        key=secrets.token_urlsafe(16),
        env={"RUN_STATE_STORE": kind},
        storage=STORAGE_OF_RUN_STATE_STORE[kind],
        root=root,
    )


def test_two_sessions_of_one_fabric_notebook_make_one_process(serve_on_each_store, tmp_path):
    serve = serve_on_each_store(key="k")
    _send_sessions(serve, tmp_path / "events", range(2))

    entities = _notebook_entities(Atlas(serve.atlas_url))
    assert [(e["typeName"], e["attributes"]["qualifiedName"].split("/processes/")[0]) for e in entities] == [
        ("spark_application", OWNER),
        ("spark_process", OWNER),
    ]
    app, process = entities
    assert (app["attributes"]["name"], process["attributes"]["name"], process["attributes"]["runCount"]) == (
        "nb_bronze_to_silver",
        CTAS,
        2,
    )
    assert refs(process, "application") == [OWNER]


def _release_tree(tmp_path: Path) -> Path:
    """The earlier release's source tree (git archive of RELEASE_BEFORE), run with this environment's packages."""
    known = subprocess.run(["git", "cat-file", "-e", f"{RELEASE_BEFORE}^{{commit}}"], cwd=PROJECT_ROOT)
    if known.returncode != 0:
        pytest.skip(f"the earlier release {RELEASE_BEFORE[:10]} is not in this clone's history")
    tree = tmp_path / "release"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "archive", RELEASE_BEFORE, "olparser", "tools", "function_app.py", "host.json", "config"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    (tree / "node_modules").symlink_to(PROJECT_ROOT / "node_modules")  # its Azurite: the one installed here
    return tree


def test_an_upgraded_deployment_replaces_the_session_named_processes(run_state_store_kind, tmp_path):
    data = tmp_path / "data"
    old = _start(data, run_state_store_kind, root=_release_tree(tmp_path))
    try:
        _send_sessions(old, tmp_path / "before", range(2))
        before = _notebook_entities(Atlas(old.atlas_url))
    finally:
        assert old.stop() == 0, old.output()
    sessions = [f"spark://{FABRIC_NAMESPACE}/{session_job('nb_bronze_to_silver', s)}" for s in SESSIONS[:2]]
    assert sorted({(e["typeName"], e["attributes"]["qualifiedName"].split("/processes/")[0]) for e in before}) == [
        *(("spark_application", s) for s in sessions),
        *(("spark_process", s) for s in sessions),
    ]

    new = _start(data, run_state_store_kind)
    try:
        _send_sessions(new, tmp_path / "after", range(2, 3))
        after = _notebook_entities(Atlas(new.atlas_url))
    finally:
        assert new.stop() == 0, new.output()
    assert [(e["typeName"], e["attributes"]["qualifiedName"].split("/processes/")[0]) for e in after] == [
        ("spark_application", OWNER),
        ("spark_process", OWNER),
    ]
    assert after[1]["attributes"]["runCount"] == 3  # the runs of both earlier sessions and the new one
