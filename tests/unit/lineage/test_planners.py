"""Each planner of `build_lineage` (olparser/lineage/planners.py) on its own: a draft is taken through the planners
before it (`_through`), then the planner runs and what it records (or the plan it settles) is compared whole."""

from __future__ import annotations

from typing import Any

from olparser.lineage import planners as p
from olparser.lineage.identity import JobRef, Orchestration
from olparser.lineage.options import LineageOptions
from olparser.lineage.plan import LineagePlan, UnmatchedDataset
from olparser.lineage.sql_columns import DerivedColumns
from olparser.runs.model import DatasetFacts, RunSnapshot
from olparser.sql import ParsedSql, SqlColumn, SqlColumnLineage, SqlParseFailure, SqlTable
from tests.support.fake_engine import FakeEngine
from tests.support.lineage_corpus import snapshot

LAKE = "abfss://lake@acct.dfs.core.windows.net"
LAKE_QN = "https://acct.dfs.core.windows.net/lake"
SPARK = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark"
TEMPORARY = ("inmemory://", "orders.Load task")
APP_QN = "spark://etl/app"


def _run(**parts: Any) -> RunSnapshot:
    return snapshot(**{"run_id": "r1", **parts})


def _lake(name: str, *columns: str, lineage: dict[str, list[tuple[str, str, str]]] | None = None) -> DatasetFacts:
    facets: dict[str, Any] = {}
    if columns:
        facets["schema"] = {"fields": [{"name": c, "type": "string"} for c in columns]}
    if lineage:
        facets["columnLineage"] = {
            "fields": {
                column: {"inputFields": [{"namespace": ns, "name": n, "field": f} for ns, n, f in sources]}
                for column, sources in lineage.items()
            }
        }
    return DatasetFacts(LAKE, name, facets)


def _draft(run: RunSnapshot, options: LineageOptions | None = None, **arguments: Any) -> p.Draft:
    return p.Draft(run, FakeEngine(), options or LineageOptions(), **arguments)


def _through(draft: p.Draft, planner: p.Planner) -> p.Draft:
    """The draft as `planner` receives it: every planner before it has run (none settled the plan)."""
    for earlier in p.PLANNERS[: p.PLANNERS.index(planner)]:
        assert earlier(draft) is None, earlier.__name__
    return draft


def _qns(datasets: list) -> list[str]:
    return [d.qualified_name for d in datasets]


def test_the_planners_run_in_this_order():
    assert [planner.__name__ for planner in p.PLANNERS] == [
        "application_runs",
        "temporary_datasets",
        "lifecycle_only",
        "runs_without_outputs",
        "sql_column_lineage",
        "edge_limit",
        "named_datasets",
        "owner",
        "orchestrator",
        "streaming_window",
        "column_lineages",
        "several_outputs",
        "processes",
        "governance",
        "assembled",
    ]


def test_application_runs_settle_with_a_note_and_other_runs_go_on():
    application = _run(job_facets={"jobType": {"integration": "SPARK", "jobType": "APPLICATION"}})
    assert p.application_runs(_draft(application)) == LineagePlan(notes=(p.APPLICATION_NOTE,))
    assert p.application_runs(_draft(_run())) is None


def test_temporary_datasets_are_dropped_or_replaced_by_what_their_writers_read():
    run = _run(
        inputs=(_lake("b"), DatasetFacts(*TEMPORARY)),
        outputs=(_lake("x"), DatasetFacts("inmemory://", "next")),
    )
    draft = _through(_draft(run, upstream={TEMPORARY: (_lake("a"), _lake("b", "id"))}), p.temporary_datasets)
    assert p.temporary_datasets(draft) is None
    assert draft.temporary == frozenset({TEMPORARY, ("inmemory://", "next")})
    # each dataset once, the run's own first (`b` without columns), in name order
    assert (draft.run.inputs, draft.run.outputs) == ((_lake("a"), _lake("b")), (_lake("x"),))


def test_a_run_without_temporary_datasets_is_left_as_it_is():
    run = _run(inputs=(_lake("a"),), outputs=(_lake("x"),))
    draft = _through(_draft(run), p.temporary_datasets)
    assert p.temporary_datasets(draft) is None
    assert (draft.temporary, draft.run) == (frozenset(), run)


def _changed(name: str, change: str, previous: str | None = None) -> DatasetFacts:
    facet: dict[str, Any] = {"lifecycleStateChange": change}
    if previous:
        facet["previousIdentifier"] = {"namespace": LAKE, "name": previous}
    return DatasetFacts(LAKE, name, {"lifecycleStateChange": facet})


def test_a_lifecycle_only_run_keeps_the_datasets_that_still_exist():
    renamed = _changed("new", "RENAME", previous="old")
    run = _run(outputs=(_changed("gone", "DROP"), renamed))
    draft = _through(_draft(run), p.lifecycle_only)
    assert p.lifecycle_only(draft) is None
    assert (draft.lifecycle_only, draft.run.outputs) == (True, (renamed,))


def test_a_run_that_writes_is_not_lifecycle_only():
    run = _run(inputs=(_lake("a"),), outputs=(_lake("x"),))
    draft = _through(_draft(run), p.lifecycle_only)
    assert p.lifecycle_only(draft) is None
    assert (draft.lifecycle_only, draft.run) == (False, run)


def test_runs_without_outputs_settle_with_a_note():
    assert p.runs_without_outputs(_through(_draft(_run(inputs=(_lake("a"),))), p.runs_without_outputs)) == (
        LineagePlan(notes=(p.NO_OUTPUTS,))
    )
    dropped = _through(_draft(_run(outputs=(_changed("gone", "DROP"),))), p.runs_without_outputs)
    assert p.runs_without_outputs(dropped) == LineagePlan(notes=(p.LIFECYCLE_ONLY_NOTE,))
    assert p.runs_without_outputs(_through(_draft(_run(outputs=(_lake("x"),))), p.runs_without_outputs)) is None


def test_an_airflow_task_without_outputs_writes_its_dag_and_task():
    task = _run(
        job_namespace="airflow",
        job_name="sales_daily.load_orders",
        producer="https://github.com/apache/airflow/tree/providers-openlineage/2.7.3",
        job_facets={"jobType": {"processingType": "BATCH", "integration": "AIRFLOW", "jobType": "TASK"}},
    )
    plan = p.runs_without_outputs(_through(_draft(task), p.runs_without_outputs))
    assert plan == LineagePlan(
        entities=(
            {
                "typeName": "airflow_dag",
                "guid": "-1",
                "attributes": {
                    "qualifiedName": "airflow://airflow/sales_daily",
                    "name": "sales_daily",
                    "dagId": "sales_daily",
                },
            },
            {
                "typeName": "airflow_task",
                "guid": "-2",
                "attributes": {
                    "qualifiedName": "airflow://airflow/sales_daily/tasks/load_orders",
                    "name": "load_orders",
                    "taskId": "load_orders",
                },
                "relationshipAttributes": {
                    "dag": {
                        "guid": "-1",
                        "typeName": "airflow_dag",
                        "uniqueAttributes": {"qualifiedName": "airflow://airflow/sales_daily"},
                        "relationshipType": "airflow_dag_tasks",
                    }
                },
            },
        ),
        notes=(p.NO_OUTPUTS,),
    )


SQL = "INSERT INTO t SELECT a FROM s"
PARSED = ParsedSql(
    in_tables=(SqlTable(("s",)),),
    out_tables=(SqlTable(("t",)),),
    columns=(SqlColumnLineage(SqlColumn(SqlTable(("t",)), "a"), (SqlColumn(SqlTable(("s",)), "a"),)),),
)


def test_sql_column_lineage_is_derived_for_the_outputs_without_any():
    run = _run(job_facets={"sql": {"query": SQL}}, inputs=(_lake("s", "a"),), outputs=(_lake("t", "a"),))
    draft = _through(_draft(run, parse_sql=lambda sql, dialect: PARSED), p.sql_column_lineage)
    assert p.sql_column_lineage(draft) is None
    assert draft.derived == DerivedColumns(
        {
            (LAKE, "t"): {
                "fields": {
                    "a": {
                        "inputFields": [
                            {"namespace": LAKE, "name": "s", "field": "a", "transformations": [{"type": "DIRECT"}]}
                        ]
                    }
                }
            }
        }
    )


def test_sql_column_lineage_notes_a_failure_and_needs_a_parser():
    run = _run(job_facets={"sql": {"query": SQL}}, inputs=(_lake("s", "a"),), outputs=(_lake("t", "a"),))
    failing = _through(_draft(run, parse_sql=lambda sql, dialect: SqlParseFailure("no")), p.sql_column_lineage)
    assert p.sql_column_lineage(failing) is None
    assert failing.derived == DerivedColumns({}, "column lineage from SQL: no")
    without_parser = _through(_draft(run), p.sql_column_lineage)
    assert p.sql_column_lineage(without_parser) is None
    assert without_parser.derived is None


def test_edge_limit_cuts_inputs_and_outputs_in_name_order_and_says_so():
    run = _run(inputs=(_lake("a"), _lake("b"), _lake("c")), outputs=(_lake("x"), _lake("y")), truncated=3)
    draft = _through(_draft(run, LineageOptions(max_process_edges=2)), p.edge_limit)
    assert p.edge_limit(draft) is None
    assert (draft.run_inputs, draft.run_outputs, draft.truncation) == (
        (_lake("a"), _lake("b")),
        (_lake("x"),),
        "more than 3 inputs or outputs were sent; the first 3 of each (in name order) are kept (MAX_DATASETS_PER_RUN); "
        "1 of 2 outputs and 2 of 3 inputs are written: inputs × outputs is limited to 2 per run "
        "(MAX_PROCESS_EDGES_PER_RUN)",
    )


def test_edge_limit_keeps_a_run_within_it_whole():
    run = _run(inputs=(_lake("a"),), outputs=(_lake("x"), _lake("y")))
    draft = _through(_draft(run, LineageOptions(max_process_edges=2)), p.edge_limit)
    assert p.edge_limit(draft) is None
    assert (draft.run_inputs, draft.run_outputs, draft.truncation) == (run.inputs, run.outputs, "")


def test_named_datasets_names_the_inputs_and_outputs_through_the_rules():
    run = _run(inputs=(_lake("a"), DatasetFacts("sftp://files", "/in.csv")), outputs=(_lake("x"),))
    draft = _through(_draft(run), p.named_datasets)
    assert p.named_datasets(draft) is None
    names = draft.names
    assert (_qns(names.inputs), _qns(names.outputs), _qns(draft.datasets)) == (
        [f"{LAKE_QN}/a", "sftp://files/in.csv"],
        [f"{LAKE_QN}/x"],
        [f"{LAKE_QN}/a", "sftp://files/in.csv", f"{LAKE_QN}/x"],
    )
    assert {k: v.qualified_name for k, v in names.by_location.items()} == {
        (LAKE, "a"): f"{LAKE_QN}/a",
        ("sftp://files", "/in.csv"): "sftp://files/in.csv",
        (LAKE, "x"): f"{LAKE_QN}/x",
    }
    assert (names.ctx.app_key, names.ctx.is_databricks) == ("app", False)


def test_owner_finds_who_runs_the_code_and_what_the_processes_say_of_the_run():
    draft = _through(_draft(_run(inputs=(_lake("a"),), outputs=(_lake("x"),))), p.owner)
    assert p.owner(draft) is None
    assert draft.owner is not None
    assert (draft.owner.type_name, draft.owner.qualified_name, draft.owner.process_type) == (
        "spark_application",
        APP_QN,
        "spark_process",
    )
    assert draft.owner_entities == (
        {"typeName": "spark_application", "attributes": {"qualifiedName": APP_QN, "name": "app", "appName": "app"}},
    )
    assert (draft.task, draft.run_by, draft.summary) == (
        None,
        Orchestration(None, None),
        {"startTime": "2024-05-01T09:59:00.000Z", "producer": SPARK, "openlineageVersion": "1.23.0"},
    )


def test_no_owner_for_a_run_without_job_name_or_a_lifecycle_only_run():
    nameless = _through(_draft(_run(job_name="", outputs=(_lake("x"),))), p.owner)
    assert p.owner(nameless) is None
    assert (nameless.owner, nameless.summary) == (None, None)
    renamed = _through(_draft(_run(outputs=(_changed("new", "RENAME", previous="old"),))), p.owner)
    assert p.owner(renamed) is None
    assert (renamed.owner, renamed.summary) == (None, None)


def _parent(parent: tuple[str, str], root: tuple[str, str]) -> dict:
    return {
        "parent": {
            "run": {"runId": "0190f000-0000-7000-8000-00000000b000"},
            "job": {"namespace": parent[0], "name": parent[1]},
            "root": {
                "run": {"runId": "0190f000-0000-7000-8000-00000000c000"},
                "job": {"namespace": root[0], "name": root[1]},
            },
        }
    }


TASK_QN = "airflow://airflow/sales_daily/tasks/load_orders"
TASK_REFERENCE = {"typeName": "airflow_task", "uniqueAttributes": {"qualifiedName": TASK_QN}}


def _orchestrated(run_facets: dict | None = None, **arguments: Any) -> p.Draft:
    """A run writing `x`, with these run facets, after `orchestrator`."""
    run = _run(run_facets=run_facets or {}, outputs=(_lake("x"),))
    draft = _through(_draft(run, **arguments), p.orchestrator)
    assert p.orchestrator(draft) is None
    return draft


def test_an_airflow_task_that_ran_the_run_is_written_before_its_owner_and_referenced():
    draft = _orchestrated(_parent(("airflow", "sales_daily.load_orders"), ("airflow", "sales_daily")))
    assert [e["attributes"]["qualifiedName"] for e in draft.owner_entities] == [
        "airflow://airflow/sales_daily",
        TASK_QN,
        "spark://etl/sales_daily.load_orders",  # the application a parent facet names
    ]
    assert (draft.orchestrator, draft.pipeline) == (TASK_REFERENCE, None)


def test_an_inherited_airflow_task_counts_when_the_runs_own_facet_names_none():
    inherited = Orchestration(
        JobRef("airflow", "sales_daily.load_orders", "0190f000-0000-7000-8000-00000000b000"),
        JobRef("airflow", "sales_daily", "0190f000-0000-7000-8000-00000000c000"),
    )
    draft = _orchestrated(inherited=inherited)
    assert (draft.orchestrator, draft.pipeline) == (TASK_REFERENCE, None)


def test_a_data_factory_pipeline_that_ran_the_run_is_resolved_not_written():
    factory = "adf://contoso-factory"
    draft = _orchestrated(_parent((factory, "load_orders"), (factory, "load_orders")))
    assert draft.pipeline is not None
    assert (draft.pipeline.factory, draft.pipeline.pipeline, draft.orchestrator) == (
        "contoso-factory",
        "load_orders",
        None,
    )
    assert [e["typeName"] for e in draft.owner_entities] == ["spark_application"]


def test_no_orchestrator_for_a_run_without_one():
    draft = _orchestrated()
    assert (draft.orchestrator, draft.pipeline, len(draft.owner_entities)) == (None, None, 1)


STREAMING = {"jobType": {"processingType": "STREAMING", "integration": "SPARK", "jobType": "SQL_JOB"}}


def test_a_micro_batch_writes_its_windows_run_without_per_batch_metadata():
    run = _run(job_facets=STREAMING, outputs=(_lake("x"),), start_time="2024-05-01T10:20:00Z")
    draft = _through(_draft(run, LineageOptions(streaming_history_window=600)), p.streaming_window)
    assert p.streaming_window(draft) is None
    assert draft.last_run == ("stream-6357971c-79a2-5ef4-b25a-c09bc4dd85b7", "2024-05-01T10:20:00.000Z")
    assert draft.summary == {"producer": SPARK, "openlineageVersion": "1.23.0"}


def test_a_batch_run_keeps_its_own_run_and_metadata():
    draft = _through(_draft(_run(outputs=(_lake("x"),))), p.streaming_window)
    summary = draft.summary
    assert p.streaming_window(draft) is None
    assert (draft.last_run, draft.summary) == (None, summary)


def test_column_lineages_come_from_the_facet_and_their_sources_are_written():
    output = _lake("x", "id", lineage={"id": [(LAKE, "a", "id"), (LAKE, "elsewhere", "id"), (*TEMPORARY, "id")]})
    run = _run(inputs=(_lake("a", "id"), DatasetFacts(*TEMPORARY)), outputs=(output, _lake("y")))
    draft = _through(_draft(run), p.column_lineages)
    assert p.column_lineages(draft) is None
    (lineage, source), (none, no_source) = draft.lineages
    assert lineage is not None
    assert (source, none, no_source) == (p.COLUMN_LINEAGE_FACET, None, "")
    assert (_qns(list(lineage.sources)), lineage.skipped) == (
        [f"{LAKE_QN}/a", f"{LAKE_QN}/elsewhere"],
        frozenset({TEMPORARY}),
    )
    assert _qns(draft.datasets) == [
        f"{LAKE_QN}/a",
        f"{LAKE_QN}/x",
        f"{LAKE_QN}/y",
        f"{LAKE_QN}/a",
        f"{LAKE_QN}/elsewhere",
    ]


def test_column_lineage_of_prefers_the_producers_facet_to_the_derived_one():
    facet = {"fields": {"id": {"inputFields": []}}}
    derived = DerivedColumns({(LAKE, "x"): {"fields": {"id": {}}}, (LAKE, "y"): {"fields": {"id": {}}}})
    assert p.column_lineage_of(DatasetFacts(LAKE, "x", {"columnLineage": facet}), derived) == (facet, "facet")
    assert p.column_lineage_of(DatasetFacts(LAKE, "y"), derived) == ({"fields": {"id": {}}}, "sql")
    assert p.column_lineage_of(DatasetFacts(LAKE, "z"), derived) == (None, "")
    assert p.column_lineage_of(DatasetFacts(LAKE, "z"), None) == (None, "")


def test_each_of_several_outputs_lists_the_inputs_it_derives_from_and_those_none_names():
    run = _run(
        inputs=(_lake("orders", "id"), _lake("customers", "name"), _lake("rates")),
        outputs=(
            _lake("amounts", "id", lineage={"id": [(LAKE, "orders", "id")]}),
            _lake("names", "name", lineage={"name": [(LAKE, "customers", "name")]}),
            _lake("all"),
        ),
    )
    draft = _through(_draft(run), p.several_outputs)
    assert p.several_outputs(draft) is None
    # amounts, names, all: each input in the run's order
    assert [_qns(inputs) for inputs in draft.output_inputs] == [
        [f"{LAKE_QN}/orders", f"{LAKE_QN}/rates"],
        [f"{LAKE_QN}/customers", f"{LAKE_QN}/rates"],
        [f"{LAKE_QN}/orders", f"{LAKE_QN}/customers", f"{LAKE_QN}/rates"],
    ]


def test_a_temporary_source_declared_by_one_of_several_outputs_stands_for_what_its_writers_read():
    run = _run(
        inputs=(_lake("a"), DatasetFacts(*TEMPORARY)),
        outputs=(
            _lake("x", "id", lineage={"id": [(*TEMPORARY, "id")]}),
            _lake("y", "id", lineage={"id": [(LAKE, "a", "id")]}),
        ),
    )
    draft = _through(_draft(run, upstream={TEMPORARY: (_lake("up"),)}), p.several_outputs)
    assert p.several_outputs(draft) is None
    assert [_qns(inputs) for inputs in draft.output_inputs] == [[f"{LAKE_QN}/up"], [f"{LAKE_QN}/a"]]
    assert p.declared_keys(run.outputs[0], draft, draft.lineages[0][0]) == frozenset(
        {("azure_datalake_gen2_path", f"{LAKE_QN}/up")}
    )


def test_one_output_lists_every_input():
    run = _run(inputs=(_lake("a"), _lake("b")), outputs=(_lake("x", "id", lineage={"id": [(LAKE, "a", "id")]}),))
    draft = _through(_draft(run), p.several_outputs)
    assert p.several_outputs(draft) is None
    assert [_qns(inputs) for inputs in draft.output_inputs] == [[f"{LAKE_QN}/a", f"{LAKE_QN}/b"]]


def test_processes_one_per_output_with_the_status_given():
    run = _run(inputs=(_lake("a"),), outputs=(_lake("x"), _lake("y")))
    draft = _through(_draft(run, status="INCOMPLETE"), p.processes)
    assert p.processes(draft) is None
    job = "execute_insert_into_hadoop_fs_relation_command.t"
    assert [
        (e["typeName"], e["attributes"]["qualifiedName"], e["attributes"]["lastRunStatus"], e["attributes"]["inputs"])
        for e in draft.processes
    ] == [
        (
            "spark_process",
            f"{APP_QN}/processes/{job}/{LAKE_QN}/{output}",
            "INCOMPLETE",
            [{"typeName": "azure_datalake_gen2_path", "uniqueAttributes": {"qualifiedName": f"{LAKE_QN}/a"}}],
        )
        for output in ("x", "y")
    ]


def test_no_processes_without_an_owner():
    draft = _through(_draft(_run(job_name="", inputs=(_lake("a"),), outputs=(_lake("x"),))), p.processes)
    assert p.processes(draft) is None
    assert (draft.lineages, draft.output_inputs, draft.processes) == ([], [], [])


def test_governance_puts_the_jobs_contacts_and_description_on_the_processes_and_notes_unknown_names():
    facets = {
        "ownership": {"owners": [{"name": "user:jdoe@contoso.com", "type": "MAINTAINER"}, {"name": "user:nobody"}]},
        "documentation": {"description": "Orders of the day."},
    }
    options = LineageOptions(owner_contacts=(("user:jdoe@contoso.com", "0b6f9d1e-1111-4c2a-9d3e-000000000001"),))
    draft = _through(_draft(_run(job_facets=facets, outputs=(_lake("x"),)), options), p.governance)
    assert p.governance(draft) is None
    (process,) = draft.processes
    assert (process["attributes"]["description"], process["contacts"]) == (
        "Orders of the day.",
        {"Owner": [{"id": "0b6f9d1e-1111-4c2a-9d3e-000000000001", "info": "user:jdoe@contoso.com (MAINTAINER)"}]},
    )
    assert draft.governance_notes == ("ownership: no Entra object id in OWNER_CONTACTS for user:nobody",)


def test_assembled_orders_external_datasets_owner_datasets_columns_and_processes_and_gathers_the_notes():
    run = _run(
        inputs=(DatasetFacts("sftp://files", "/in.csv", {"schema": {"fields": [{"name": "id"}]}}), _lake("a")),
        outputs=(_lake("x"),),
        truncated=2,
        run_facets={
            "environment-properties": {"environment-properties": {"spark.databricks.clusterUsageTags.clusterName": "c"}}
        },
    )
    draft = _through(_draft(run), p.assembled)
    plan = p.assembled(draft)
    assert [(e["typeName"], e["guid"], e["attributes"]["qualifiedName"]) for e in plan.external_datasets] == [
        ("azure_datalake_gen2_path", "-1", f"{LAKE_QN}/a"),
        ("azure_datalake_gen2_path", "-2", f"{LAKE_QN}/x"),
    ]
    assert [(e["typeName"], e["guid"], e["attributes"]["qualifiedName"]) for e in plan.entities] == [
        ("spark_application", "-3", APP_QN),
        ("openlineage_dataset", "-4", "sftp://files/in.csv"),
        ("openlineage_column", "-5", "sftp://files/in.csv#id"),
        ("spark_process", "-6", f"{APP_QN}/processes/execute_insert_into_hadoop_fs_relation_command.t/{LAKE_QN}/x"),
    ]
    assert plan.notes == (
        p.NO_HOST_NOTE,
        "more than 2 inputs or outputs were sent; the first 2 of each (in name order) are kept (MAX_DATASETS_PER_RUN)",
    )
    assert plan.unmatched == (UnmatchedDataset("sftp://files", "/in.csv", "no rule for sftp://files"),)
    assert [d.default for d in plan.datasets] == [
        ("azure_datalake_gen2_path", f"{LAKE_QN}/a"),
        ("azure_datalake_gen2_path", f"{LAKE_QN}/x"),
        ("openlineage_dataset", "sftp://files/in.csv"),
    ]
    assert (plan.pipeline, plan.task) == (None, None)
