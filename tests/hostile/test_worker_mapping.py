"""The worker's mapping of hostile payloads (intake limits raised so they get that far): within 10x the work of an
honest payload of the same shape (lines of olparser/ run, counted: tests/support/hostile_work.py), peak memory checked
with tracemalloc."""

from __future__ import annotations

import tracemalloc
from typing import Any, Callable

import pytest

from olparser.lineage.build import build_lineage
from olparser.lineage.options import LineageOptions
from olparser.naming import MappingEngine
from olparser.naming.tokens import tokenize_name
from olparser.runs.merge import merge_event
from tests.support.hostile_work import BOUND, SLACK_LINES
from tests.support.rules import MAPPINGS_PATH
from tests.support.work_count import lines_run
from tools.samples import hostile as payloads

OPTIONS = LineageOptions()


@pytest.fixture(scope="module")
def engine() -> MappingEngine:
    return MappingEngine.from_path(MAPPINGS_PATH)


def _map_inputs(engine: MappingEngine, event: dict[str, Any], mounts: tuple = ()) -> list:
    return [
        engine.map(d["namespace"], d["name"], mounts=mounts, workspace_url=payloads.WORKSPACE) for d in event["inputs"]
    ]


def _build(engine: MappingEngine, event: dict[str, Any]):
    return build_lineage(merge_event(None, event), engine, OPTIONS)


def _within_bound(hostile: Callable[[], object], honest: Callable[[], object]) -> bool:
    """Whether `hostile()` runs at most BOUND times the lines `honest()` runs (stopped past that: TooMuchWork)."""
    limit = BOUND * lines_run(honest) + SLACK_LINES
    return lines_run(hostile, limit=limit) <= limit


def _peak_bytes(fn) -> tuple[Any, int]:
    """(what `fn` returned, the peak of memory allocated while it ran)."""
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_names_of_four_thousand_brackets_map_with_the_work_of_paths_of_that_length(engine: MappingEngine) -> None:
    """Before: 84 s of worker CPU (the name-group regex backtracked over every `[`). A name of brackets is no SQL
    name, so it maps as the storage path it claims to be. (A count of lines does not see a regular expression's own
    backtracking: bench/hostile.py measures this payload's CPU time.)"""
    hostile, honest = payloads.bracket_names_event(), payloads.honest_long_names_event()
    results = _map_inputs(engine, hostile)
    assert results[0].qualified_name == ("https://account.dfs.core.windows.net/lake/" + "[" * 3994 + "000000")
    assert all(result.purview_type == "azure_datalake_gen2_path" for result in results)
    assert _within_bound(lambda: _map_fresh(engine, hostile), lambda: _map_fresh(engine, honest))


def _map_fresh(engine: MappingEngine, event: dict[str, Any]) -> None:
    """Map every input with the name cache emptied first, so that each name is tokenised again."""
    tokenize_name.cache_clear()
    _map_inputs(engine, event)


def test_fifteen_thousand_mounts_do_not_multiply_the_lookups(engine: MappingEngine) -> None:
    """Before: 206 s (every name compared with every mount). Now 15,000 `/mnt` inputs resolved against 15,000 mounts
    cost about the work the same 15,000 datasets cost when sent already resolved (as many distinct namespaces, no
    mounts): resolving is a trie lookup, independent of the number of mounts."""
    hostile = payloads.mounts_event(15_000, 15_000)
    mounts = payloads.mount_points(15_000)
    result = engine.map("dbfs", "/mnt/m00042/t1", mounts=mounts)
    assert (result.qualified_name, result.purview_type) == (
        "https://account.dfs.core.windows.net/c00042/t1",
        "azure_datalake_gen2_path",
    )
    resolved = {
        "inputs": [
            {
                "namespace": f"abfss://c{d['name'][6:11]}@account.dfs.core.windows.net/",
                "name": d["name"].split("/", 3)[3],
            }
            for d in hostile["inputs"]
        ]
    }
    assert engine.map(**resolved["inputs"][0]).qualified_name == _map_inputs(engine, hostile, mounts)[0].qualified_name
    assert _within_bound(lambda: _map_inputs(engine, hostile, mounts), lambda: _map_inputs(engine, resolved))


def test_the_worker_builds_the_fifteen_thousand_mount_run_within_the_bound(engine: MappingEngine) -> None:
    hostile = payloads.mounts_event(15_000, 15_000)
    honest = payloads.mounts_event(20, 15_000)
    assert _within_bound(lambda: _build(engine, hostile), lambda: _build(engine, honest))


def test_fifteen_thousand_mounts_cost_the_worker_little_memory(engine: MappingEngine) -> None:
    """Peak memory of building a run with 2,000 `/mnt` inputs (tracemalloc slows the build, so fewer inputs than
    above): 15,000 mounts add their index, a few MiB, not a multiple of the run."""
    plan, hostile_peak = _peak_bytes(lambda: _build(engine, payloads.mounts_event(15_000, 2_000)))
    _, honest_peak = _peak_bytes(lambda: _build(engine, payloads.mounts_event(20, 2_000)))
    assert plan.notes == ()
    assert hostile_peak <= 2 * honest_peak + 16 * 2**20, (hostile_peak, honest_peak)
    assert hostile_peak < 128 * 2**20
