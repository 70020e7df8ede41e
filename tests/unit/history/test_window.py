"""The walk's own rules over records in memory: the overlap rule at the window's edges, depth in process hops, cycles,
and the bounds (nodes, rows, time) that cut a query short and say so."""

from __future__ import annotations

import pytest

from olparser.history import WalkLimits, Window, lineage_in_window
from olparser.history.memory import MemoryHistory
from olparser.history.model import ProcessRun, RunFacts, RunRecord
from tests.support.history_records import T0, dataset, record

CHAIN = [
    record(f"r{n}", T0 + n * 60, T0 + n * 60 + 30, inputs=(f"d{n}",), output=f"d{n + 1}", process=f"p{n}")
    for n in range(6)
]  # d0 -> p0 -> d1 -> p1 -> ... -> d6


def names(answer: dict) -> tuple[list, list]:
    return (
        [d["qualifiedName"].rsplit("/", 1)[1] for d in answer["datasets"]],
        [p["qualifiedName"].rsplit("/", 1)[1] for p in answer["processes"]],
    )


@pytest.mark.parametrize(
    "since,until,found",
    [
        (T0, T0 + 30, ["r0"]),  # a run that ends at `since` overlaps ([since, until) meets [start, end])
        (T0 + 30, T0 + 31, ["r0"]),
        (T0 + 30.001, T0 + 60, []),  # between two runs
        (T0 + 59, T0 + 60, []),  # a run that starts at `until` does not
        (T0 + 59, T0 + 60.001, ["r1"]),
    ],
)
def test_the_overlap_rule_at_the_edges(since, until, found):
    answer = lineage_in_window(
        MemoryHistory(CHAIN[:2]), f"{dataset('d1').qualified_name}", Window(since, until), "both", 1
    )
    assert sorted({r["runId"] for p in answer["processes"] for r in p["runs"]}) == found


def test_depth_counts_process_hops_and_a_cycle_ends():
    loop = record("back", T0 + 400, T0 + 430, inputs=("d6",), output="d0", process="loop")
    reader = MemoryHistory([*CHAIN, loop])
    answer = lineage_in_window(reader, dataset("d3").qualified_name, Window(T0, T0 + 3600), "downstream", 2)
    assert names(answer) == (["d3", "d4", "d5"], ["d4", "d5"])  # a process is named by its output
    assert [d["distance"] for d in answer["datasets"]] == [0, 1, 2]
    around = lineage_in_window(reader, dataset("d0").qualified_name, Window(T0, T0 + 3600), "downstream", 10)
    assert len(around["datasets"]) == 7 and len(around["processes"]) == 7 and around["truncated"] is None


def test_the_bounds_cut_a_query_short_and_say_so():
    reader = MemoryHistory(CHAIN)
    root, window = dataset("d0").qualified_name, Window(T0, T0 + 3600)
    nodes = lineage_in_window(reader, root, window, "downstream", 10, limits=WalkLimits(max_nodes=4))
    assert nodes["truncated"] == "more than 4 datasets and processes"
    rows = lineage_in_window(reader, root, window, "downstream", 10, limits=WalkLimits(max_rows=5))
    assert rows["truncated"] == "more than 5 history rows"
    ticks = iter(range(100))
    slow = lineage_in_window(
        reader, root, window, "downstream", 10, limits=WalkLimits(seconds=3), clock=lambda: next(ticks)
    )
    assert slow["truncated"] == "the query took longer than 3 s"
    assert len(slow["processes"]) < 6
    many = [record(f"m{n}", T0 + n, T0 + n + 1) for n in range(5)]
    listed = lineage_in_window(
        MemoryHistory(many),
        dataset("raw/orders").qualified_name,
        window,
        "downstream",
        1,
        limits=WalkLimits(max_runs_listed=2),
    )
    (process,) = listed["processes"]
    assert (process["runCount"], [r["runId"] for r in process["runs"]]) == (5, ["m4", "m3"])
    assert listed["edges"][0]["runCount"] == 5 and listed["edges"][0]["runs"] == ["m4", "m3"]


def test_a_dataset_without_runs_in_the_window_is_alone_and_bad_arguments_are_refused():
    answer = lineage_in_window(MemoryHistory(CHAIN), dataset("d9").qualified_name, Window(T0, T0 + 60), "both", 3)
    assert (answer["datasets"], answer["processes"], answer["edges"]) == (
        [{"qualifiedName": dataset("d9").qualified_name, "typeName": "", "distance": 0}],
        [],
        [],
    )
    with pytest.raises(ValueError, match="direction must be one of upstream, downstream, both"):
        lineage_in_window(MemoryHistory(CHAIN), "x", Window(T0, T0 + 60), "sideways", 1)
    with pytest.raises(ValueError, match="depth must be from 1 to 10, got 0"):
        lineage_in_window(MemoryHistory(CHAIN), "x", Window(T0, T0 + 60), "both", 0)


def test_a_process_row_gone_meanwhile_stops_the_walk_there():
    class Purged(MemoryHistory):
        def process_runs(self, process, window, limit):
            return []

    answer = lineage_in_window(Purged(CHAIN), dataset("d1").qualified_name, Window(T0, T0 + 3600), "upstream", 3)
    assert names(answer) == (["d1"], ["d1"])
    assert answer["processes"][0]["runs"][0]["runId"] == "r0"  # known from its access row


def test_records_in_memory_answer_newest_first():
    other = RunRecord(
        RunFacts("x", "j", "o", "t", T0 + 5, None, "INCOMPLETE", {}),
        (ProcessRun("p", "t", "n", (dataset("d0"),), (dataset("d1"),)),),
    )
    reader = MemoryHistory([*CHAIN[:2], other])
    assert [a.run.run_id for a in reader.dataset_accesses(dataset("d1").qualified_name, Window(T0, T0 + 999), 9)] == [
        "r1",
        "x",
        "r0",
    ]
    assert reader.newest_access(dataset("d1").qualified_name).run.run_id == "r1"
    assert reader.run("x") == other and reader.run("y") is None
