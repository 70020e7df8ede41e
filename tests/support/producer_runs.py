"""Runs as the Airflow and dbt producers send them (the ownership and job-type facets)."""

from __future__ import annotations

from olparser.runs.merge import merge_event

PRODUCER = "https://github.com/apache/airflow/tree/providers-openlineage/2.7.3"


TASK_FACET = {
    "_producer": PRODUCER,
    "processingType": "BATCH",
    "integration": "AIRFLOW",
    "jobType": "TASK",
    "_schemaURL": "https://openlineage.io/spec/facets/2-0-3/JobTypeJobFacet.json#/$defs/JobTypeJobFacet",
}


def _task_run(task_id: str = "load.orders_daily", job_type: dict | None = None):
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2026-03-02T06:10:00.000Z",
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {
            "runId": "01908223-0782-79b8-9495-b1c38aaee840",
            "facets": {
                "parent": {
                    "_producer": PRODUCER,
                    "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json#/$defs/ParentRunFacet",
                    "run": {"runId": "01908223-0782-79b8-9495-b1c38aaee839"},
                    "job": {"namespace": "airflow-prod", "name": "sales_daily"},
                }
            },
        },
        "job": {
            "namespace": "airflow-prod",
            "name": f"sales_daily.{task_id}",
            "facets": {"jobType": job_type if job_type is not None else TASK_FACET},
        },
        "inputs": [{"namespace": "postgres://pg.contoso.com:5432", "name": "sales.public.orders"}],
        "outputs": [{"namespace": "postgres://pg.contoso.com:5432", "name": "sales.public.orders_daily"}],
    }
    return merge_event(None, event)


# dbt-ol (integration/dbt, openlineage/common/provider/dbt/structured_logs.py): a node's COMPLETE has the job
# `{unique_id}` (`_get_job_name`: `get_node_unique_id(event)`), `jobType: {integration: DBT, jobType: MODEL}`, the
# dbt command's run as parent (`dbt_run_metadata`: job `dbt-run-{project}`), the `dbt_run` run facet
# (`dbt_run_run_facet`: invocation_id, project_name, ...); a Postgres model's datasets as the naming spec names them
DBT_PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.33.0/integration/dbt"


def _dbt_model_run(job_type: str = "MODEL"):
    return merge_event(
        None,
        {
            "eventType": "COMPLETE",
            "eventTime": "2025-05-20T08:27:10.000Z",
            "producer": DBT_PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {
                "runId": "0196eccd-8aa4-7274-9116-824575596ab0",
                "facets": {
                    "parent": {
                        "run": {"runId": "0196eccd-8aa4-7274-9116-824575596aaf"},
                        "job": {"namespace": "dbt", "name": "dbt-run-jaffle_shop"},
                    },
                    "dbt_run": {
                        "invocation_id": "0f0b4d6e-1c1a-4d57-9b43-2a0d6f1f6c11",
                        "project_name": "jaffle_shop",
                        "project_version": "1.0",
                        "profile_name": "jaffle_shop",
                        "dbt_runtime": "core",
                    },
                },
            },
            "job": {
                "namespace": "dbt",
                "name": "model.jaffle_shop.customers",
                "facets": {"jobType": {"processingType": "BATCH", "integration": "DBT", "jobType": job_type}},
            },
            "inputs": [{"namespace": "postgres://pg.contoso.com:5432", "name": "jaffle.public.stg_orders"}],
            "outputs": [{"namespace": "postgres://pg.contoso.com:5432", "name": "jaffle.public.customers"}],
        },
    )
