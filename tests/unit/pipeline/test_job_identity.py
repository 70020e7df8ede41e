"""The runner with notebook-service runs (Fabric): every session of one notebook writes the same process, and
processes an earlier version wrote under a session-specific owner are taken over — their runs are written again and
the ledger deletes what no run uses any more. On each run-state store, with the run history of the same kind. The
catalog is the boundary fake; tests/e2e/test_job_identity.py runs an earlier release against the embedded one."""

from __future__ import annotations

from datetime import timedelta

import olparser.lineage.context as context_module
from olparser.lineage import LineageOptions
from olparser.lineage.identity import JobIdentity, session_application, strip_application
from olparser.pipeline import LineagePipeline, WritePolicy
from tests.unit.pipeline.fake_catalog import FakeCatalog
from tools.samples.notebooks import (
    CTAS,
    FABRIC_NAMESPACE,
    FABRIC_NOTEBOOK_ID,
    ONELAKE,
    SILVER_ITEM,
    T0,
    fabric_ctas_run,
    session_job,
)

NOW = T0.timestamp() + 3600
SESSIONS = (
    "00000000-1111-4222-8333-444444444444",  # DataHub's Fabric fixture (tools/samples/notebooks.py)
    "9b2f6c1e-7d4a-4c3b-a5e8-0f1d2c3b4a59",
    "5d0c3e2a-1f4b-4a6c-9e8d-7b6a5c4d3e2f",
)
OUTPUT = f"{ONELAKE}/{SILVER_ITEM}/Tables/dbo/customers"  # no rule for OneLake in the tests' rules: a placeholder
OWNER = f"spark://{FABRIC_NAMESPACE}/notebooks/{FABRIC_NOTEBOOK_ID}"
PROCESS = ("spark_process", f"{OWNER}/processes/{CTAS}/{OUTPUT}")


def _pipeline(store, engine, catalog, history) -> LineagePipeline:
    return LineagePipeline(
        store,
        engine,
        LineageOptions(),
        catalog,
        WritePolicy(environment_wait_seconds=0),
        clock=lambda: NOW,
        history=history,
    )


def _legacy_identity(job_namespace, job_name, run_facets):
    """What versions before the stable identity keyed a run on: the session's application job."""
    session = session_application(job_name, run_facets)
    return JobIdentity(session, None, strip_application(job_name, session))


def _owned(catalog: FakeCatalog) -> list[tuple[str, str]]:
    return sorted(k for k in catalog.entities if k[0] in ("spark_application", "spark_process"))


def test_sessions_of_one_notebook_write_one_process_whose_run_count_grows(store, fresh_history, engine):
    catalog = FakeCatalog()
    pipeline = _pipeline(store, engine, catalog, fresh_history())
    for number, session in enumerate(SESSIONS):
        for event in fabric_ctas_run(session, started=T0 + timedelta(hours=number)):
            pipeline.process(event, now=NOW)

    assert _owned(catalog) == [("spark_application", OWNER), PROCESS]
    process = catalog.entities[PROCESS]["attributes"]
    assert (process["name"], process["runCount"]) == (CTAS, 3)
    assert catalog.entities[("spark_application", OWNER)]["attributes"]["name"] == "nb_bronze_to_silver"


def test_processes_written_under_a_session_owner_are_taken_over(store, fresh_history, engine, monkeypatch):
    catalog = FakeCatalog()
    history = fresh_history()
    pipeline = _pipeline(store, engine, catalog, history)
    with monkeypatch.context() as patch:  # the earlier release: two sessions, two owners, two processes
        patch.setattr(context_module, "job_identity", _legacy_identity)
        for number, session in enumerate(SESSIONS[:2]):
            for event in fabric_ctas_run(session, started=T0 + timedelta(hours=number)):
                pipeline.process(event, now=NOW)
    legacy = [f"spark://{FABRIC_NAMESPACE}/{session_job('nb_bronze_to_silver', s)}" for s in SESSIONS[:2]]
    assert _owned(catalog) == sorted(
        [
            *(("spark_application", o) for o in legacy),
            *(("spark_process", f"{o}/processes/{CTAS}/{OUTPUT}") for o in legacy),
        ]
    )

    # upgraded: the next session writes the stable process, and the earlier sessions' runs are written again
    restarted = _pipeline(store, engine, catalog, history)
    outcomes = [restarted.process(e, now=NOW) for e in fabric_ctas_run(SESSIONS[2], started=T0 + timedelta(hours=2))]

    assert _owned(catalog) == [("spark_application", OWNER), PROCESS]
    assert outcomes[-1].deleted == 4  # two session owners, two session processes
    assert catalog.entities[PROCESS]["attributes"]["runCount"] == 3
    assert {p.qualified_name for r in (history.run(k) for k in _run_keys()) for p in r.processes} == {PROCESS[1]}
    # a redelivered COMPLETE writes its runCount once more, then nothing: the take-over is not repeated
    complete = fabric_ctas_run(SESSIONS[2], started=T0 + timedelta(hours=2))[-1]
    assert [
        (o.status, o.catalog_calls, o.deleted) for o in (restarted.process(complete, now=NOW) for _ in range(2))
    ] == [("written", 1, 0), ("unchanged", 0, 0)]


def _run_keys() -> list[str]:
    return [event["run"]["runId"] for session in SESSIONS for event in fabric_ctas_run(session)[:1]]
