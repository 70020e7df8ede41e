"""Streaming: the micro-batches of one streaming job (each its own run) make one run-history entry per
STREAMING_HISTORY_WINDOW, not one per batch; the producer's emissionPattern window counts when longer. The runner on
each run-state store with the history of the same kind, the catalog a boundary fake: catalog calls and history
entries per micro-batch, counted."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from olparser.history.records import history_record, history_run_id, streaming_window
from olparser.history.window import Window
from olparser.lineage import LineageOptions, build_lineage
from olparser.naming import MappingEngine
from olparser.pipeline import LineagePipeline, WritePolicy
from olparser.runs.merge import merge_event
from olparser.settings import Settings
from tests.support.rules import MAPPINGS_PATH
from tests.support.stores import open_test_history_store, open_test_run_state_store
from tests.unit.pipeline.fake_catalog import FakeCatalog
from tools.samples.notebooks import streaming_batches

T0 = 1_788_998_400  # a window boundary of 3,600 s and of 300 s
ENGINE = MappingEngine.from_path(MAPPINGS_PATH)
OUTPUT = "https://contosolake.dfs.core.windows.net/curated/orders"
PROCESS = (
    "spark://streams/orders_stream/processes/micro_batch_execution.orders/"
    "https://contosolake.dfs.core.windows.net/curated/orders"
)


def _runs(events):
    runs = {}
    for event in events:
        runs[event["run"]["runId"]] = merge_event(runs.get(event["run"]["runId"]), event)
    return list(runs.values())


def _started():
    from datetime import datetime, timezone

    return datetime.fromtimestamp(T0, timezone.utc)


def test_the_micro_batches_of_a_window_make_the_same_record():
    options = LineageOptions(streaming_history_window=300)
    runs = _runs(streaming_batches(40, started=_started()))  # every 10 s: windows [T0, T0+300) and [T0+300, T0+600)
    records = [history_record(r, build_lineage(r, ENGINE, options), options, status="COMPLETE") for r in runs]

    assert len({r.canonical() for r in records}) == 2
    first, last = records[0].facts, records[-1].facts
    assert (first.start, first.end, last.start, last.end) == (T0, T0 + 300, T0 + 300, T0 + 600)
    assert first.run_id.startswith("stream-") and first.run_id == history_run_id(runs[29], options)
    assert set(first.metadata) == {
        "producer",
        "openlineageVersion",
        "parentJobNamespace",
        "parentJobName",
        "parentRunId",
    }  # what every batch shares; no per-batch times or counts


def test_the_window_is_the_setting_or_the_producers_longer_periodic_window():
    settings = Settings.from_env({"STREAMING_HISTORY_WINDOW": "600"})
    options = LineageOptions.from_settings(settings)
    (run,) = _runs(streaming_batches(1)[:2])
    assert streaming_window(run, options) == 600.0
    # jobType 2-0-4 emissionPattern: PERIODIC with windowDuration (seconds) longer than the setting wins
    periodic = {"eventTrigger": "PERIODIC", "eventContentMode": "COMPLETE_SNAPSHOT", "windowDuration": 7200}
    (run,) = _runs(streaming_batches(1, emission_pattern=periodic)[:2])
    assert streaming_window(run, options) == 7200.0
    (run,) = _runs(streaming_batches(1, emission_pattern={**periodic, "windowDuration": 60})[:2])
    assert streaming_window(run, options) == 600.0
    batch = merge_event(None, {**streaming_batches(1)[1], "job": {"namespace": "n", "name": "j", "facets": {}}})
    assert streaming_window(batch, options) is None and history_run_id(batch, options) == batch.run_id


@pytest.mark.parametrize("batches_for", [{"sqlite": (1000, 3600), "table": (60, 300)}])
def test_micro_batches_cost_one_history_entry_per_window(
    run_state_store, run_state_store_kind, tmp_path, request, batches_for
):
    batches, window = batches_for[run_state_store_kind]
    history = open_test_history_store(run_state_store_kind, tmp_path, request, retention_days=36500)
    catalog = FakeCatalog()
    pipeline = LineagePipeline(
        run_state_store,
        ENGINE,
        LineageOptions(streaming_history_window=window),
        catalog,
        WritePolicy(environment_wait_seconds=0),
        clock=lambda: T0 + 20_000,
        history=history,
    )
    try:
        events = streaming_batches(batches, started=_started())
        statuses = [pipeline.process(e, now=T0 + 20_000).status for e in events]
        windows = -(-batches * 10 // window)  # batches every 10 s from a window boundary

        # the first batch of each window writes its window's plan; the others write the same plan: skipped
        assert (statuses.count("written"), statuses.count("unchanged")) == (windows, batches - windows)
        assert catalog.keys("spark_process") == [("spark_process", PROCESS)]
        process = catalog.entities[("spark_process", PROCESS)]["attributes"]
        assert process["runCount"] == windows
        assert (process["lastRunId"], process["lastRunTime"]) == (
            history_run_id(_runs(events[-2:])[0], LineageOptions(streaming_history_window=window)),
            datetime.fromtimestamp(T0 + (windows - 1) * window, timezone.utc)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
        )
        assert catalog.calls == windows  # one bulk write per window, none per unchanged micro-batch
        runs = history.dataset_accesses(OUTPUT, Window(T0 - 10, T0 + 20_000), 10_000)
        assert [(a.run.start, a.run.end) for a in sorted(runs, key=lambda a: a.run.start)] == [
            (T0 + n * window, T0 + (n + 1) * window) for n in range(windows)
        ]
        assert history.run(events[0]["run"]["runId"]) is None  # known by its window's id
    finally:
        history.close()


def _stream_catalog(events, folder, window):
    """The catalog (entities) and its call count after the runner on SQLite stores takes `events` in this order."""
    folder.mkdir()
    store = open_test_run_state_store("sqlite", folder)
    history = open_test_history_store("sqlite", folder, None, retention_days=36500)
    catalog = FakeCatalog()
    pipeline = LineagePipeline(
        store,
        ENGINE,
        LineageOptions(streaming_history_window=window),
        catalog,
        WritePolicy(environment_wait_seconds=0),
        clock=lambda: T0 + 20_000,
        history=history,
    )
    try:
        for event in events:
            pipeline.process(event, now=T0 + 20_000)
    finally:
        history.close()
        store.close()
    return catalog.entities, catalog.calls


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_micro_batches_in_any_order_give_the_catalog_in_order_gives(tmp_path_factory, data):
    """Whatever the order of the batches' events (each batch's START before or after its COMPLETE, batches of a
    later window before those of an earlier one), the catalog is the one in-order processing writes, and a batch
    that plans what its window last wrote costs no catalog write: at most one write per window and run count."""
    window, batches = 300, 12  # every 10 s: 12 batches in one window; 30 s apart: three windows
    events = streaming_batches(batches, every_seconds=window // 4, started=_started())
    windows = 3
    folder = tmp_path_factory.mktemp("stream")
    expected, in_order_calls = _stream_catalog(events, folder / "in-order", window)
    assert in_order_calls == windows
    shuffled = data.draw(st.permutations(events))
    entities, calls = _stream_catalog(shuffled, folder / "shuffled", window)

    assert entities == expected
    assert calls <= windows * windows < batches
