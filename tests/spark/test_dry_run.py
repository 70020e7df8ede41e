"""Which planned runs a dry run's listing keeps (tools/spark/dry_run.py), without Spark; and on Spark, that the listing
and its counts equal the single-process runner's when runs of the same jobs are spread over several partitions."""

from __future__ import annotations

import json
import uuid
import zlib

import pytest

from olparser.lineage import LineageOptions
from olparser.naming import MappingEngine
from tests.spark.events import spark_run, write_json_lines
from tests.support import temporary_runs as tr
from tests.support.rules import MAPPINGS_PATH
from tests.support.spark_jobs import job_for
from tools.spark.dry_run import NewestRuns
from tools.spark.local import run_local
from tools.spark.runs import RunResult, plan_run
from tools.spark.spark_job import run_spark

ENGINE = MappingEngine.from_path(MAPPINGS_PATH)


def planned(key: str, job: int, minute: int, inputs: int = 2) -> RunResult:
    events = [zlib.compress(json.dumps(e).encode()) for e in spark_run(job, inputs=inputs, minute=minute)]
    return plan_run(key, events, ENGINE, LineageOptions())


def test_only_the_newest_run_of_a_process_is_kept_whatever_the_order_and_the_others_count_as_superseded():
    newest: NewestRuns[str] = NewestRuns()
    for run in (planned("r1", 0, 1), planned("r3", 0, 3), planned("r2", 0, 2), planned("other", 1, 0)):
        assert newest.add(run, run.key) == []

    assert (newest.kept(), newest.superseded) == (["r3", "other"], 2)


def test_an_older_run_that_alone_plans_a_dataset_is_kept():
    newest: NewestRuns[str] = NewestRuns()
    newest.add(planned("old", 0, 1, inputs=3), "old")  # it also reads sales/part_0_2
    newest.add(planned("new", 0, 2), "new")

    assert (newest.kept(), newest.superseded) == (["old", "new"], 0)  # old's process: superseded in its selection


def test_beyond_what_may_wait_runs_are_passed_on_at_once_and_older_runs_are_still_dropped():
    newest: NewestRuns[str] = NewestRuns(held_entities=1)

    assert newest.add(planned("r1", 0, 1), "r1") == ["r1"]
    assert newest.add(planned("r2", 0, 2), "r2") == ["r2"]  # r1, passed on, is counted by its own selection
    assert newest.add(planned("r0", 0, 0), "r0") == []
    assert (newest.kept(), newest.superseded) == ([], 1)


@pytest.mark.spark
def test_a_dry_run_on_spark_lists_and_counts_what_the_single_process_runner_does(spark, tmp_path):
    events = []
    for repeat in range(6):  # five jobs, each run six times; job 3's oldest run reads a third folder
        for job in range(5):
            run = spark_run(job, inputs=3 if (job, repeat) == (3, 0) else 2, minute=repeat)
            run_id = str(uuid.UUID(int=1000 * job + repeat + 1))
            for event in run:
                event["run"]["runId"] = run_id
                if (job, repeat) == (4, 5):  # the newest run of job 4 has `id` as a string in both inputs
                    for dataset in event["inputs"]:
                        dataset["facets"]["schema"]["fields"][0]["type"] = "string"
            events += run
    for part in range(3):
        write_json_lines(tmp_path / "events" / f"part-{part}.jsonl", events[part::3])
    job = job_for(None)

    on_spark = run_spark(spark, [str(tmp_path / "events")], job, dry_run=tmp_path / "spark.jsonl")
    single = run_local([str(tmp_path / "events")], job, dry_run=tmp_path / "single.jsonl")

    assert (tmp_path / "spark.jsonl").read_bytes() == (tmp_path / "single.jsonl").read_bytes()
    assert (
        (
            on_spark.tally.runs["planned"],
            on_spark.processes_planned,
            on_spark.processes_superseded,
            on_spark.dry_run_entities,
        )
        == (
            single.tally.runs["planned"],
            single.processes_planned,
            single.processes_superseded,
            single.dry_run_entities,
        )
        == (30, 5, 25, 22)
    )
    # 22: the application, 5 processes (each as its newest run has it), 5 outputs, 11 inputs (sales/part_3_2 only
    # from job 3's oldest run, which is kept for it)


def test_temporary_datasets_and_narrowed_inputs_in_a_dry_run_on_spark_and_in_one_process(spark, tmp_path):
    # the save task's events first, in another file than its writers': a reader is planned once every writer is
    # known, wherever its events are
    chain = tr.etl_chain("dry")
    write_json_lines(tmp_path / "events" / "part-0.jsonl", chain[4:])
    write_json_lines(tmp_path / "events" / "part-1.jsonl", [*chain[:4], *tr.two_outputs("dry-split")])
    job = job_for(None)

    on_spark = run_spark(spark, [str(tmp_path / "events")], job, dry_run=tmp_path / "spark.jsonl")
    single = run_local([str(tmp_path / "events")], job, dry_run=tmp_path / "single.jsonl")

    assert (tmp_path / "spark.jsonl").read_bytes() == (tmp_path / "single.jsonl").read_bytes()
    assert dict(on_spark.tally.runs) == dict(single.tally.runs) == {"planned": 2, "skipped": 2}
    entities = [json.loads(line) for line in (tmp_path / "spark.jsonl").read_text().splitlines()]
    edges = {
        e["attributes"]["outputs"][0]["uniqueAttributes"]["qualifiedName"]: sorted(
            i["uniqueAttributes"]["qualifiedName"] for i in e["attributes"]["inputs"]
        )
        for e in entities
        if e["typeName"] == "spark_process"
    }
    assert edges == {**tr.ETL_EDGES, **tr.TWO_OUTPUT_EDGES}
    assert not [e for e in entities if "inmemory" in e["attributes"]["qualifiedName"]]
