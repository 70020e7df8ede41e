"""Issue 35: the run-state side of inherited orchestrators (olparser/pipeline/inherited_orchestrators.py), on each run-state
store (SQLite, Azure Tables on Azurite): an application run that an Airflow task ran records its parent and root, a
SQL job of it looks them up, whichever comes first (events: tests/unit/lineage/test_inherited_orchestrator.py says
where each part comes from)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from olparser.lineage.identity import Orchestration
from olparser.pipeline.inherited_orchestrators import look_up_orchestration, record_passed_orchestration
from tests.support.airflow_identity import APP, DAG, TASK, parent_facet
from tests.support.orchestration_events import SQL_RUN_ID, application_run, sql_job_run


@pytest.mark.parametrize("application_first", [True, False], ids=["application-first", "sql-job-first"])
def test_through_the_run_state_store_either_order_meets(run_state_store, application_first):
    store = run_state_store
    application, sql_job = application_run(), sql_job_run()
    if application_first:
        assert record_passed_orchestration(store, APP.run_id, application, 100.0) == frozenset()
        assert look_up_orchestration(store, sql_job, 101.0) == Orchestration(TASK, DAG, None)
    else:
        assert look_up_orchestration(store, sql_job, 100.0) is None
        # the SQL job looked first: the application's record answers it, to be written again
        assert record_passed_orchestration(store, APP.run_id, application, 101.0) == frozenset({SQL_RUN_ID})
        assert look_up_orchestration(store, sql_job, 102.0) == Orchestration(TASK, DAG, None)
    # runs that need nothing cost nothing: no record, no lookup
    assert record_passed_orchestration(store, SQL_RUN_ID, sql_job, 103.0) == frozenset()
    assert look_up_orchestration(store, replace(sql_job, run_facets=parent_facet(APP, APP)), 103.0) is None
