"""A broad corpus of `build_lineage` calls, to pin what the builder gives for each (tests/unit/lineage/
test_build_golden.py): the real runs of ../shared/openlineage (sequences merged event by event, single events,
static lineage), and the runs the other tests send (Databricks notebook runs of tests/support/databricks_runs and the
property scenarios, temporary datasets and two outputs of tests/support/temporary_runs, orchestrated runs, Airflow and
dbt runs, drops and renames, streaming micro-batches, Fabric sessions, the demo), each under several options and
arguments (status, column lineage from SQL, upstream datasets, inherited orchestrators).

A case is named; `plan_digest` reduces a plan to what the golden file records: its fingerprint (`plan_fingerprint`)
and a digest of everything else, entity order and placeholder guids included.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import uuid
from dataclasses import dataclass, field, fields, is_dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterator, Mapping

from olparser.lineage import LineageOptions, LineagePlan, plan_fingerprint
from olparser.lineage.edges import Name, temporary_writes, upstream_inputs
from olparser.lineage.identity import Orchestration
from olparser.lineage.inherited import inherited_orchestration, passed_orchestration
from olparser.runs.merge import merge_event
from olparser.runs.model import DatasetFacts, RunSnapshot
from olparser.sql import ParsedSql, ParseResult, SqlColumn, SqlColumnLineage, SqlParseFailure, SqlTable
from tests.support import databricks_runs as dr
from tests.support import lifecycle_events as le
from tests.support import orchestration_events as oe
from tests.support import temporary_runs as tr
from tests.support.producer_runs import _dbt_model_run, _task_run
from tests.support.shared_events import EVENTS, load_sequence, sequence_folders
from tools.samples.demo import demo_events
from tools.samples.notebooks import fabric_ctas_run, streaming_batches


@dataclass(frozen=True)
class Case:
    """One call: `build_lineage(run, engine, options, **arguments)`; `engine` "fake" (tests/support/fake_engine.py)
    or "rules" (the one rule file)."""

    name: str
    run: RunSnapshot
    engine: str = "rules"
    options: LineageOptions = LineageOptions()
    arguments: Mapping[str, Any] = field(default_factory=dict)


HOSTS = (("3464153745686717", "adb-3464153745686717.17.azuredatabricks.net"),)
OPTION_VARIANTS: dict[str, LineageOptions] = {
    "default": LineageOptions(workspace_hosts=HOSTS),
    "storage": LineageOptions(dataset_identity="storage", workspace_hosts=HOSTS),
    "edges2": LineageOptions(max_process_edges=2, workspace_hosts=HOSTS),
    "bare": LineageOptions(),
    "metastore": LineageOptions(
        workspace_hosts=HOSTS,
        workspace_metastores=((dr.WORKSPACE_ID, "5a31ba44-bbf4-4174-bf33-e1fa078e6765"),),
        owner_contacts=(("user:jdoe@contoso.com", "0b6f9d1e-1111-4c2a-9d3e-000000000001"),),
        streaming_history_window=600.0,
    ),
}


def plan_digest(plan: LineagePlan) -> list[str]:
    """[fingerprint, digest of the whole plan (order, guids, notes, unmatched, datasets, pipeline, task)]."""
    text = json.dumps(_canonical(plan), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return [plan_fingerprint(plan), hashlib.sha256(text.encode("ascii", "surrogatepass")).hexdigest()[:32]]


def _canonical(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {
            "__class__": type(value).__name__,
            **{f.name: _canonical(getattr(value, f.name)) for f in fields(value)},
        }
    if isinstance(value, dict):
        return [[_canonical(k), _canonical(v)] for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_canonical(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def merged_states(events: list[dict[str, Any]]) -> Iterator[tuple[str, RunSnapshot]]:
    """Each run of `events` as known after each of its events (in the order given): (`{runId}@{n}`, snapshot)."""
    runs: dict[str, RunSnapshot] = {}
    counts: dict[str, int] = {}
    for event in events:
        key = event["run"]["runId"]
        runs[key] = merge_event(runs.get(key), event)
        counts[key] = counts.get(key, 0) + 1
        yield f"{key}@{counts[key]}", runs[key]


def final_runs(events: list[dict[str, Any]]) -> dict[str, RunSnapshot]:
    return dict((name.split("@")[0], run) for name, run in merged_states(events))


# A fake SQL parser: answers for the statements of `SQL_RUNS`, a failure for any other (the shared runs' statements)
FAKE_SQL: dict[str, ParseResult] = {
    "INSERT INTO sales.t SELECT s.a, s.b AS c FROM sales.s s": ParsedSql(
        in_tables=(SqlTable(("sales", "s")),),
        out_tables=(SqlTable(("sales", "t")),),
        columns=(
            SqlColumnLineage(SqlColumn(SqlTable(("sales", "t")), "a"), (SqlColumn(SqlTable(("sales", "s")), "a"),)),
            SqlColumnLineage(SqlColumn(SqlTable(("sales", "t")), "c"), (SqlColumn(SqlTable(("sales", "s")), "b"),)),
        ),
        aliases=(("s", SqlTable(("sales", "s"))),),
    ),
    "INSERT INTO sales.t SELECT * FROM sales.s JOIN sales.r": ParsedSql(
        in_tables=(SqlTable(("sales", "s")), SqlTable(("sales", "r"))),
        out_tables=(SqlTable(("sales", "t")),),
        columns=(SqlColumnLineage(SqlColumn(None, "x"), (SqlColumn(None, "x"),)),),
    ),
}


def fake_parse_sql(sql: str, dialect: str) -> ParseResult:
    return FAKE_SQL.get(sql) or SqlParseFailure(f"the fake parser does not know this {dialect} statement")


HIVE = "hive://metastore:9083"
LAKE = "abfss://lake@acct.dfs.core.windows.net"


def _table(name: str, *columns: str, lineage: dict[str, Any] | None = None) -> DatasetFacts:
    facets: dict[str, Any] = {"symlinks": {"identifiers": [{"namespace": HIVE, "name": name, "type": "TABLE"}]}}
    if columns:
        facets["schema"] = {"fields": [{"name": c, "type": "string"} for c in columns]}
    if lineage:
        facets["columnLineage"] = {"fields": lineage}
    return DatasetFacts(namespace=LAKE, name="warehouse/" + name.replace(".", ".db/"), facets=facets)


def snapshot(**parts: Any) -> RunSnapshot:
    """A Spark SQL job's COMPLETE run, with `parts` instead of its own."""
    base: dict[str, Any] = dict(
        run_id="0190f000-0000-7000-8000-0000000000aa",
        job_namespace="etl",
        job_name="app.execute_insert_into_hadoop_fs_relation_command.t",
        event_type="COMPLETE",
        event_time="2024-05-01T10:00:00Z",
        producer="https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark",
        start_time="2024-05-01T09:59:00Z",
    )
    return RunSnapshot(**{**base, **parts})


OWNERSHIP = {
    "ownership": {
        "owners": [
            {"name": "user:jdoe@contoso.com", "type": "MAINTAINER"},
            {"name": "user:asmith@contoso.com", "type": "SME"},
        ]
    },
    "documentation": {"description": "Orders of the day."},
    "tags": {"tags": [{"key": "domain", "value": "sales", "source": "USER"}]},
}


HAND_UPSTREAM: dict[Name, tuple[DatasetFacts, ...]] = {
    ("inmemory://", "tmp"): (_table("sales.up", "a"), _table("sales.r", "x")),
    ("inmemory://", "orders.Load task"): (_table("sales.up", "a"),),
}


def hand_runs() -> dict[str, RunSnapshot]:
    """Runs shaped for one feature each: SQL facets, declared `lineage` facets, truncation, governance facets, a Data
    Factory parent, a Databricks run without host, a lifecycle-only run, an application run, static lineage."""
    s, r, t, u = (
        _table("sales.s", "a", "b", "x"),
        _table("sales.r", "x"),
        _table("sales.t", "a", "c", "x"),
        _table("sales.u", "a"),
    )
    adf_parent = {
        "parent": {
            "run": {"runId": "5d1f2c3a-0000-4000-8000-000000000001"},
            "job": {"namespace": "adf://contoso-factory", "name": "load_orders"},
        }
    }
    many = tuple(_table(f"sales.in{n}", "a") for n in range(5))
    return {
        "sql-insert": snapshot(
            job_facets={"sql": {"query": "INSERT INTO sales.t SELECT s.a, s.b AS c FROM sales.s s"}},
            inputs=(s,),
            outputs=(t,),
        ),
        "sql-star-two-outputs": snapshot(
            job_facets={"sql": {"query": "INSERT INTO sales.t SELECT * FROM sales.s JOIN sales.r"}},
            inputs=(r, s),
            outputs=(t, u),
        ),
        "sql-unknown": snapshot(job_facets={"sql": {"query": "SELEC nothing"}}, inputs=(s,), outputs=(t,)),
        "sql-with-facet": snapshot(
            job_facets={"sql": {"query": "INSERT INTO sales.t SELECT s.a, s.b AS c FROM sales.s s"}},
            inputs=(s, r),
            outputs=(
                _table(
                    "sales.t", "a", lineage={"a": {"inputFields": [{"namespace": LAKE, "name": r.name, "field": "x"}]}}
                ),
                u,
            ),
        ),
        "lineage-facet": snapshot(
            job_facets={
                "lineage": {
                    "entries": [
                        {"namespace": LAKE, "name": t.name, "inputs": [{"namespace": LAKE, "name": s.name}]},
                        {"namespace": LAKE, "name": u.name, "inputs": [{"namespace": "inmemory://", "name": "tmp"}]},
                    ]
                }
            },
            inputs=(r, s, DatasetFacts("inmemory://", "tmp")),
            outputs=(t, replace(u, facets={**u.facets, "lineage": {"inputs": []}})),
        ),
        "truncated": snapshot(inputs=many, outputs=(t, u), truncated=5),
        "governance": snapshot(job_facets=OWNERSHIP, inputs=(s,), outputs=(t,)),
        "adf-parent": snapshot(run_facets=adf_parent, inputs=(s,), outputs=(t,)),
        "adf-parent-databricks": replace(
            final_runs(dr.events(replace(dr.orders_run(900), run_facets=adf_parent)))[dr.run_id(900)],
        ),
        "databricks-no-host": final_runs(dr.events(replace(dr.orders_run(901), workspace_id="77")))[dr.run_id(901)],
        "databricks-job": final_runs(dr.events(replace(dr.orders_run(902), environment_extra=oe.JOB_ENV)))[
            dr.run_id(902)
        ],
        "temporary-unknown-upstream": snapshot(
            inputs=(DatasetFacts("inmemory://", "orders.Load task"), s),
            outputs=(t, DatasetFacts("inmemory://", "orders.next")),
        ),
        "only-temporary-output": snapshot(inputs=(s,), outputs=(DatasetFacts("inmemory://", "x"),)),
        "no-outputs": snapshot(inputs=(s,)),
        "no-job-name": snapshot(job_name="", inputs=(s,), outputs=(t,)),
        "drop": snapshot(
            job_name="app.execute_drop_table_command.t",
            outputs=(replace(t, facets={**t.facets, "lifecycleStateChange": {"lifecycleStateChange": "DROP"}}),),
        ),
        "rename": snapshot(
            job_name="app.execute_alter_table_rename_command.t",
            outputs=(
                replace(
                    u,
                    facets={
                        **u.facets,
                        "lifecycleStateChange": {
                            "lifecycleStateChange": "RENAME",
                            "previousIdentifier": {"namespace": LAKE, "name": t.name},
                        },
                    },
                ),
            ),
        ),
        "application": snapshot(
            job_name="app",
            job_facets={"jobType": {"processingType": "BATCH", "integration": "SPARK", "jobType": "APPLICATION"}},
            inputs=(s,),
            outputs=(t,),
        ),
        "static-job": snapshot(run_id=None, event_type="COMPLETE", inputs=(s,), outputs=(t,)),
        "static-dataset": snapshot(run_id=None, job_namespace="", job_name="", outputs=(t,)),
        "failed": snapshot(event_type="FAIL", inputs=(s,), outputs=(t,)),
    }


def _generated_runs() -> dict[str, list[dict[str, Any]]]:
    """Notebook runs as the property scenarios generate them (tests/property/scenarios.py), enumerated."""
    inputs_choices = (
        (),
        (dr.RAW_ORDERS,),
        (dr.RAW_ORDERS, dr.RAW_CUSTOMERS),
        (dr.KAFKA_PAYMENTS, dr.Dataset(f"abfss://raw@{dr.LAKE_ACCOUNT}", "refunds", ("id", "amount"))),
    )
    statements = ("execute_insert_into_hadoop_fs_relation_command.orders", "create_table_as_select.orders")
    found = {}
    for number, (inputs, statement, running, notebook) in enumerate(
        itertools.product(inputs_choices, statements, (True, False), ("/Repos/etl/orders", "/Repos/etl/backfill"))
    ):
        run = dr.orders_run(100 + number, dr.T0 + timedelta(minutes=number), inputs=inputs, statement=statement)
        found[f"generated{number}"] = dr.events(replace(run, notebook=notebook, running=running))
    symlinked = dr.Dataset(LAKE, "warehouse/sales.db/orders", ("id",), data_source=True, symlink=(HIVE, "sales.orders"))
    found["generated-symlink"] = dr.events(
        replace(dr.orders_run(300), inputs=(symlinked, dr.RAW_CUSTOMERS), mounts=None, cluster_name=None)
    )
    return found


def _chain_upstream(events: list[dict[str, Any]]) -> Callable[[RunSnapshot], dict[Name, tuple[DatasetFacts, ...]]]:
    writes: dict[Name, tuple[DatasetFacts, ...]] = {}
    for run in final_runs(events).values():
        writes.update(temporary_writes(run))

    def upstream(run: RunSnapshot) -> dict[Name, tuple[DatasetFacts, ...]]:
        return upstream_inputs(run, lambda names: {n: writes[n] for n in names if n in writes})

    return upstream


def _inherited() -> Orchestration | None:
    passed = passed_orchestration(oe.application_run())
    return inherited_orchestration([passed[1]]) if passed else None


def local_cases() -> list[Case]:
    """Every case that needs nothing from ../shared."""
    cases: list[Case] = []

    def each_option(name: str, run: RunSnapshot, **arguments: Any) -> None:
        for option_name, options in OPTION_VARIANTS.items():
            cases.append(Case(f"{name}/{option_name}", run, "rules", options, arguments))
        cases.append(Case(f"{name}/fake", run, "fake", LineageOptions(), arguments))
        cases.append(
            Case(f"{name}/incomplete", run, "rules", OPTION_VARIANTS["default"], {**arguments, "status": "INCOMPLETE"})
        )

    for name, run in hand_runs().items():
        each_option(f"hand/{name}", run)
        each_option(f"hand/{name}/upstream", run, upstream=HAND_UPSTREAM)
        each_option(f"hand/{name}/sql", run, parse_sql=fake_parse_sql)
    for name, events in _generated_runs().items():
        for state, run in merged_states(events):
            each_option(f"{name}/{state}", run)
    chain = [*tr.etl_chain(), *tr.two_outputs()]
    upstream = _chain_upstream(chain)
    for state, run in merged_states(chain):
        each_option(f"temporary/{state}", run, upstream=upstream(run))
        each_option(f"temporary-unknown/{state}", run)
    inherited = _inherited()
    orchestrated = {
        "sql-job": oe.sql_job_run(),
        "sql-job-no-outputs": oe.sql_job_run(outputs=[]),
        "application": oe.application_run(),
        **{f"events/{k}": v for k, v in merged_states([*oe.orchestrated_events(), *oe.airflow_task_events()])},
        **{f"app-events/{k}": v for k, v in merged_states(oe.application_events())},
    }
    for name, run in orchestrated.items():
        each_option(f"orchestrated/{name}", run)
        each_option(f"orchestrated/{name}/inherited", run, inherited=inherited)
    producers = {
        "airflow-task": _task_run(),
        "airflow-no-type": _task_run(job_type={}),
        "dbt-model": _dbt_model_run(),
        "dbt-job": _dbt_model_run("JOB"),
        "airflow-no-outputs": merge_event(None, oe.airflow_task_events()[1]),
    }
    for name, run in producers.items():
        each_option(f"producer/{name}", run)
    orders = le.table(le.LAKE, "orders", symlink=(HIVE, "curated.orders"))
    lifecycle = [
        le.write("write", orders),
        le.drop("drop", orders),
        le.run_event(
            "rename",
            "app.execute_alter_table_rename_command.orders2",
            [],
            [le.table(le.LAKE, "orders2", "RENAME", previous=(le.LAKE, "orders"))],
        ),
        le.run_event("truncate", "app.truncate", [orders], [le.table(le.LAKE, "orders", "TRUNCATE")]),
    ]
    for state, run in merged_states(lifecycle):
        each_option(f"lifecycle/{state}", run)
    t0 = datetime(2026, 9, 8, 12, 0, tzinfo=timezone.utc)
    streams = {
        "plain": streaming_batches(3, started=t0),
        "periodic": streaming_batches(
            2, started=t0, emission_pattern={"eventTrigger": "PERIODIC", "windowDuration": 7200}
        ),
    }
    for name, events in streams.items():
        for state, run in merged_states(events):
            each_option(f"streaming/{name}/{state}", run)
    fabric = [
        *fabric_ctas_run("00000000-1111-4222-8333-444444444444"),
        *fabric_ctas_run("9b2f6c1e-7d4a-4c3b-a5e8-0f1d2c3b4a59"),
    ]
    for state, run in merged_states(fabric):
        each_option(f"fabric/{state}", run)
    for name, run in final_runs(demo_events(datetime(2026, 10, 1, 12, 0, tzinfo=timezone.utc))).items():
        each_option(f"demo/{name}", run)
    return cases


def shared_cases() -> list[Case]:
    """The real runs of ../shared/openlineage: each sequence merged event by event, each single event."""
    cases: list[Case] = []
    for folder in sequence_folders():
        for state, run in merged_states(load_sequence(folder.name)):
            for option_name, options in OPTION_VARIANTS.items():
                cases.append(Case(f"sequence/{folder.name}/{state}/{option_name}", run, "rules", options))
            cases.append(Case(f"sequence/{folder.name}/{state}/fake", run, "fake", LineageOptions()))
            cases.append(
                Case(
                    f"sequence/{folder.name}/{state}/sql",
                    run,
                    "rules",
                    OPTION_VARIANTS["default"],
                    {"parse_sql": fake_parse_sql, "status": "INCOMPLETE"},
                )
            )
    for name, event in _single_events():
        try:
            run = merge_event(None, event)
        except (KeyError, TypeError, ValueError, AttributeError):  # not an event the merger takes
            continue
        for option_name, options in OPTION_VARIANTS.items():
            cases.append(Case(f"event/{name}/{option_name}", run, "rules", options))
        cases.append(Case(f"event/{name}/fake", run, "fake", LineageOptions()))
    return cases


def _single_events() -> Iterator[tuple[str, dict[str, Any]]]:
    """Each event of ../shared/openlineage/events (the accelerator's filter tests hold several), the templates of the
    container tests (no run id, time or producer) completed with what they leave out."""
    for path in sorted(EVENTS.glob("*.json")) if EVENTS.is_dir() else ():
        loaded = json.loads(path.read_text())
        items = (
            [(f"{path.name}#{i}", item.get("event")) for i, item in enumerate(loaded)]
            if isinstance(loaded, list)
            else [(path.name, loaded)]
        )
        for name, event in items:
            if isinstance(event, dict):
                yield name, _completed(name, copy.deepcopy(event))


def _completed(name: str, event: dict[str, Any]) -> dict[str, Any]:
    run = event.setdefault("run", {})
    if not isinstance(run.get("runId"), str) or "$" in run["runId"]:
        run["runId"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"ol2purview-tests/corpus/{name}"))
    if not isinstance(event.get("eventTime"), str) or "$" in event["eventTime"]:
        event["eventTime"] = "2024-05-01T10:00:00Z"
    event.setdefault("eventType", "COMPLETE")
    event.setdefault("producer", "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark")
    job = event.setdefault("job", {})
    job.setdefault("namespace", "templates")
    job.setdefault("name", name.split(".")[0])
    return event
