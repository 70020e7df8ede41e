"""The runner: which events write lineage, and that repeats cost no catalog call. The catalog is faked here (a unit
test of the ordering); the end-to-end tests run the same runner against the local catalog over HTTP."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from olparser.lineage import LineageOptions
from olparser.naming import MappingEngine
from olparser.pipeline import LineagePipeline
from olparser.runs.sqlite_store import SqliteRunStateStore
from olparser.settings import DEFAULT_MAPPINGS_PATH

CLL = "openlineage/sequences/compat-tests__CLL"
CLL_RUN = "019127df-0850-72bc-b214-b255290588a6"


class RecordingUploader:
    def __init__(self) -> None:
        self.plans = []

    def upload(self, plan):
        self.plans.append(plan)

        class Report:
            calls = 2
        return Report()


@pytest.fixture
def pipeline_and_uploader(tmp_path: Path):
    store = SqliteRunStateStore(tmp_path / "runs.sqlite3", ttl_seconds=3600)
    uploader = RecordingUploader()
    pipeline = LineagePipeline(store, MappingEngine.from_path(DEFAULT_MAPPINGS_PATH), LineageOptions(), uploader)
    yield pipeline, uploader
    store.close()


def _events(shared_dir: Path, *numbers: int) -> list[dict]:
    return [json.loads((shared_dir / CLL / f"{n}.json").read_text()) for n in numbers]


def test_start_and_running_wait_and_complete_writes_once(shared_dir, pipeline_and_uploader):
    pipeline, uploader = pipeline_and_uploader
    start, running, _running2, complete = _events(shared_dir, 5, 6, 7, 8)
    assert pipeline.process(start).status == "waiting"
    assert pipeline.process(running).status == "waiting"
    outcome = pipeline.process(complete)
    assert (outcome.run_id, outcome.event_type, outcome.status, outcome.catalog_calls) == (
        CLL_RUN, "COMPLETE", "written", 2)
    assert len(uploader.plans) == 1
    # A duplicate COMPLETE, or a late RUNNING after it, changes nothing and costs no catalog call.
    assert pipeline.process(complete).status == "unchanged"
    assert pipeline.process(running).status == "unchanged"
    assert len(uploader.plans) == 1


def test_complete_without_start_writes_its_lineage(shared_dir, pipeline_and_uploader):
    pipeline, uploader = pipeline_and_uploader
    (complete,) = _events(shared_dir, 8)
    assert pipeline.process(complete).status == "written"
    process = [e for e in uploader.plans[0].entities if e["typeName"].endswith("_process")]
    assert len(process) == 1
    inputs = sorted(ref["uniqueAttributes"]["qualifiedName"] for ref in process[0]["attributes"]["inputs"])
    # The symlinks facet names the Hive tables (warehouse namespace); no rule knows a local warehouse -> placeholders.
    assert inputs == ["file:/tmp/cll_test/default.cll_source1", "file:/tmp/cll_test/default.cll_source2"]
    assert [u.name for u in uploader.plans[0].unmatched] == ["default.cll_source1", "default.cll_source2", "default.tbl1"]


def test_failed_run_writes_nothing_by_default(shared_dir, pipeline_and_uploader):
    pipeline, uploader = pipeline_and_uploader
    (complete,) = _events(shared_dir, 8)
    complete = dict(complete, eventType="FAIL")
    assert pipeline.process(complete).status == "skipped"
    assert uploader.plans == []


def _later_run(event: dict, run_id: str, event_time: str, keep_inputs: int) -> dict:
    """The same job run again later, reading fewer inputs (its column lineage, which names them too, is left out)."""
    outputs = [dict(o, facets={k: v for k, v in o.get("facets", {}).items() if k != "columnLineage"})
               for o in event["outputs"]]
    return dict(event, eventTime=event_time, run=dict(event["run"], runId=run_id),
                inputs=event["inputs"][:keep_inputs], outputs=outputs)


def _process_inputs(plan) -> list[list[str]]:
    return [sorted(ref["uniqueAttributes"]["qualifiedName"] for ref in e["attributes"]["inputs"])
            for e in plan.entities if e["typeName"].endswith("_process")]


def test_a_late_event_of_an_older_run_does_not_bring_back_inputs_a_newer_run_dropped(shared_dir,
                                                                                   pipeline_and_uploader):
    pipeline, uploader = pipeline_and_uploader
    (old,) = _events(shared_dir, 8)
    new = _later_run(old, "019127df-ffff-7000-8000-000000000001", "2030-01-01T00:00:00Z", keep_inputs=1)
    assert pipeline.process(new).status == "written"
    assert _process_inputs(uploader.plans[0]) == [["file:/tmp/cll_test/default.cll_source2"]]
    late = pipeline.process(old)  # e.g. requeued from the poison queue after the newer run landed
    assert (late.status, late.superseded, late.catalog_calls) == ("superseded", 1, 0)
    assert len(uploader.plans) == 1
    assert pipeline.process(old).status == "unchanged"


def test_runs_in_order_each_write_their_process(shared_dir, pipeline_and_uploader):
    pipeline, uploader = pipeline_and_uploader
    (old,) = _events(shared_dir, 8)
    new = _later_run(old, "019127df-ffff-7000-8000-000000000001", "2030-01-01T00:00:00Z", keep_inputs=1)
    assert [pipeline.process(e).status for e in (old, new)] == ["written", "written"]
    assert _process_inputs(uploader.plans[1]) == [["file:/tmp/cll_test/default.cll_source2"]]
    assert pipeline.process(new).superseded == 0
