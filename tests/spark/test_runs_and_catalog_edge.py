"""Per-run steps and the decisions around the catalog, without Spark: merging in any order, the newest run per
process, shared entity versions, verdicts against what the catalog holds, the rate limiter, sources, the report."""

from __future__ import annotations

import json
import zlib
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from olparser.lineage import LineageOptions
from olparser.naming import MappingEngine
from tests.spark.events import spark_run
from tests.support.rules import MAPPINGS_PATH
from tools.spark.catalog import UNCHANGED, WRITE, RateLimiter, process_verdict, replaced_placeholders
from tools.spark.report import BackfillReport, Tally
from tools.spark.runs import PLANNED, WAITING, plan_run, reduce_facts, selected_plan
from tools.spark.sources import archive_days, local_files, spark_paths

ENGINE = MappingEngine.from_path(MAPPINGS_PATH)
OPTIONS = LineageOptions()


def run_events(number: int, minute: int = 0) -> list[bytes]:
    return [zlib.compress(json.dumps(e).encode()) for e in spark_run(number, minute=minute)]


def test_a_run_gives_the_same_plan_whatever_the_order_of_its_events():
    start, complete = run_events(0)
    forward = plan_run("r0", [start, complete], ENGINE, OPTIONS)
    backward = plan_run("r0", [complete, start], ENGINE, OPTIONS)
    assert forward.status == PLANNED and forward.plan == backward.plan
    assert forward.order == (1740823209.0, "r0")
    assert plan_run("r0", [start], ENGINE, OPTIONS).status == WAITING


def test_the_newest_run_wins_each_process_and_older_runs_write_only_their_owners_and_datasets():
    old = plan_run("old", run_events(0, minute=0), ENGINE, OPTIONS)
    new = plan_run("new", run_events(0, minute=5), ENGINE, OPTIONS)
    summary = reduce_facts([old, new])

    assert list(summary.winners.values()) == ["new"]
    assert (summary.tally.runs, summary.versions, summary.unmatched) == (Counter({PLANNED: 2}), {}, Counter())
    lost = selected_plan(old, summary.winners, summary.versions)
    won = selected_plan(new, summary.winners, summary.versions)
    assert (lost.plan.process_names(), lost.superseded) == ((), 1)  # its owner and datasets, as the live path writes
    assert lost.plan.entities == old.plan.without_processes(set(old.plan.process_names())).entities
    assert lost.left_out == (("spark_process", old.plan.process_names()[0]),)
    assert lost.owned_keys() == old.plan.owned_keys()  # the ledger records its whole plan, as the live path's does
    assert (won.plan, won.superseded) == (new.plan, 0)


def test_entities_runs_disagree_about_get_the_newest_runs_version_everywhere():
    old_events = spark_run(0, minute=0)
    for event in old_events:  # both inputs share one schema: the old run had `id` as a string in both
        event["inputs"][0]["facets"]["schema"]["fields"] = [{"name": "id", "type": "string"}]
    rules = json.loads(MAPPINGS_PATH.read_text())
    no_adls = MappingEngine.from_rules([r for r in rules if not r["name"].startswith("adlsGen2")])
    old = plan_run("old", [zlib.compress(json.dumps(e).encode()) for e in old_events], no_adls, OPTIONS)
    new = plan_run("new", run_events(0, minute=5), no_adls, OPTIONS)
    summary = reduce_facts([old, new])

    columns = [
        ("openlineage_column", f"abfss://raw@contosolake.dfs.core.windows.net/sales/part_0_{i}#id") for i in range(2)
    ]
    assert sorted(summary.versions) == columns
    assert [summary.versions[c]["attributes"]["dataType"] for c in columns] == ["long", "long"]
    assert summary.unmatched == Counter({"abfss://raw@contosolake.dfs.core.windows.net": 2})


def process(inputs: list[tuple[str, str]], time: str = "2025-03-01T10:00:09Z", **attributes) -> dict:
    refs = [{"guid": "-1", "typeName": t, "uniqueAttributes": {"qualifiedName": q}} for t, q in inputs]
    return {
        "typeName": "spark_process",
        "attributes": {"qualifiedName": "p", "name": "n", "lastRunTime": time, "inputs": refs, **attributes},
        "relationshipAttributes": {
            "application": {"typeName": "spark_application", "uniqueAttributes": {"qualifiedName": "app"}}
        },
    }


def held(entity: dict) -> dict:
    """What the catalog answers: real guids, the relationship in relationshipAttributes."""
    attributes = {k: ([{**r, "guid": "g"} for r in v] if k == "inputs" else v) for k, v in entity["attributes"].items()}
    return {
        **entity,
        "guid": "g",
        "attributes": attributes,
        "status": "ACTIVE",
        "relationshipAttributes": {
            "application": {"guid": "a", "typeName": "spark_application", "uniqueAttributes": {"qualifiedName": "app"}}
        },
    }


def test_verdicts_against_what_the_catalog_holds():
    ours = process([("azure_datalake_gen2_path", "lake/a")])
    assert process_verdict(ours, None) == WRITE
    assert process_verdict(ours, held(ours)) == UNCHANGED
    assert process_verdict(ours, held(process([("openlineage_dataset", "a")]))) == WRITE
    assert process_verdict(ours, held(process([("azure_datalake_gen2_path", "lake/a")], name="other"))) == WRITE
    newer = held(process([("openlineage_dataset", "a")], time="2025-03-01T11:00:00+00:00"))
    # a newer run is the run-state store's answer (olparser/pipeline/writing.py newer_writers), not the catalog's lastRunTime
    assert process_verdict(ours, newer) == WRITE
    assert replaced_placeholders(ours, held(process([("openlineage_dataset", "a"), ("hive_table", "t")]))) == {"a"}


def test_the_rate_limiter_spaces_calls_without_bursts():
    now = [100.0]
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(round(seconds, 6))
        now[0] += seconds

    limiter = RateLimiter(4.0, clock=lambda: now[0], sleep=sleep)
    for _ in range(4):
        limiter.acquire()
    now[0] += 2.0  # idle time is not saved up for a burst
    limiter.acquire()
    limiter.acquire()
    assert waits == [0.25, 0.25, 0.25, 0.25]
    RateLimiter(None, clock=lambda: now[0], sleep=sleep).acquire()
    assert len(waits) == 4


def test_archive_days_cover_the_range():
    since = datetime(2025, 2, 27, 22, tzinfo=timezone.utc).timestamp()
    until = datetime(2025, 3, 2, tzinfo=timezone.utc).timestamp()
    assert archive_days(since, until) == ["2025/02/27", "2025/02/28", "2025/03/01"]
    assert archive_days(None, until) is None
    assert archive_days(since, since) == []
    now = datetime(2025, 2, 28, 5, tzinfo=timezone.utc)
    assert archive_days(since, None, now) == ["2025/02/27", "2025/02/28", "2025/03/01"]


def test_sources_skip_hidden_names_and_narrow_an_archive_to_its_days(tmp_path: Path):
    for name in ("2025/03/01/10/a.json.gz", "2025/03/02/10/b.json.gz", "2025/03/01/10/_tmp", "2025/.x/c.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"{}")
    since = datetime(2025, 3, 2, tzinfo=timezone.utc).timestamp()
    assert [p.relative_to(tmp_path).as_posix() for p in local_files([str(tmp_path)])] == [
        "2025/03/01/10/a.json.gz",
        "2025/03/02/10/b.json.gz",
    ]
    assert [p.name for p in local_files([str(tmp_path)], since, since + 86400)] == ["b.json.gz"]
    assert [p.name for p in local_files([str(tmp_path / "2025/*/*/10/*.gz")])] == ["a.json.gz", "b.json.gz"]
    assert spark_paths([str(tmp_path)], since, since + 2 * 86400) == [f"{tmp_path}/{{2025/03/02,2025/03/03}}"]
    assert spark_paths(["abfss://lineage-archive@acct.dfs.core.windows.net/"], since, since + 86400) == [
        "abfss://lineage-archive@acct.dfs.core.windows.net/2025/03/02"
    ]
    assert spark_paths(["abfss://exports@acct.dfs.core.windows.net/ol"], since, None) == [
        "abfss://exports@acct.dfs.core.windows.net/ol"
    ]


def test_the_report_table_csv_and_json(tmp_path: Path):
    tally = Tally(
        events_read=10,
        outside_range=1,
        refused=Counter({"400 b": 1, "400 a": 1}),
        runs=Counter({"planned": 3, "waiting": 1}),
    )
    report = BackfillReport(
        "backfill",
        tally,
        processes_planned=3,
        processes_written=2,
        processes_unchanged=1,
        processes_superseded=4,
        catalog_calls=5,
        bulk_requests=1,
        entities_deleted=6,
        unmatched_namespaces=[("=cmd|'/c calc'!A1", 7), ("dbfs", 2)],
        seconds=1.25,
    )
    csv_path, json_path = report.write(tmp_path)
    assert csv_path.read_text().splitlines()[:4] == [
        "section,item,value",
        "events,read,10",
        "events,accepted,8",
        "events,refused,2",
    ]
    assert "unmatched namespaces,'=cmd|'/c calc'!A1,7" in csv_path.read_text().splitlines()
    assert json.loads(json_path.read_text()) == {
        "command": "backfill",
        "events": {"read": 10, "refused": 2, "outsideTimeRange": 1},
        "refusedByReason": {"400 a": 1, "400 b": 1},
        "runs": {"total": 4, "withLineage": 3, "waiting": 1, "skipped": 0},
        "processes": {"planned": 3, "written": 2, "unchanged": 1, "superseded": 4},
        "catalog": {"calls": 5, "bulkRequests": 1, "placeholdersRemoved": 0, "entitiesDeleted": 6},
        "history": {"runsRecorded": 0},
        "unmatchedNamespaces": [
            {"namespace": "=cmd|'/c calc'!A1", "datasets": 7},
            {"namespace": "dbfs", "datasets": 2},
        ],
        "dryRunEntities": None,
        "seconds": 1.25,
    }
    assert report.table().splitlines()[1].split() == ["events:", "read", "10"]


def test_the_report_table_stays_aligned_with_long_reasons_and_namespaces():
    reason = (
        "400 $.inputs[3].facets.schema.fields[12]: expected an object with name and type, got a list of "
        "1,204 strings from a producer that writes\nits schema facet by hand"
    )
    namespace = "abfss://" + "very-long-container-name@storageaccount" * 3 + ".dfs.core.windows.net"
    report = BackfillReport(
        "backfill",
        Tally(events_read=1_234_567, refused=Counter({reason: 3, "400 b": 1})),
        processes_written=12,
        unmatched_namespaces=[(namespace, 7), ("dbfs", 2)],
    )
    lines = report.table().splitlines()[1:]
    assert len(lines) == 21 and all(line.rstrip()[-1:].isdigit() for line in lines)
    assert {len(line) for line in lines} == {2 + 60 + 2 + 10}  # the value column ends at the same place
    assert "  refused: 400 $.inputs[3].facets.schema.fields[12]: expected…           3" in lines
    assert "  unmatched namespaces: abfss://very-long-container-name@stor…           7" in lines
    assert "  events: read" + " " * 53 + "1234567" in lines
    assert reason in report.to_json()["refusedByReason"]  # the JSON and CSV keep the reason whole
