"""Hypothesis strategies for "whatever the order": sets of runs and the order in which a queue delivers their events.

A scenario is a handful of sources: the real Spark sequences and Databricks samples in ../shared, two Fabric notebook
sessions (tools/samples/notebooks.py), and generated
Databricks notebook runs (environment facet on RUNNING only, /mnt inputs resolved by mount points, column lineage,
re-runs that drop an input, two statements writing one output, runs without a Spark job, runs that never finish),
and the tasks of one job passing temporary datasets with a run of two outputs (tests/temporary_runs.py).
A delivery is every event of the scenario at least once (duplicates allowed), in any order.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.support import databricks_runs as dr
from tests.support import temporary_runs as tr
from tests.support.repository import SHARED
from tools.samples.notebooks import T0 as FABRIC_T0
from tools.samples.notebooks import fabric_ctas_run

EVENTS = SHARED / "openlineage" / "events"
SEQUENCES = SHARED / "openlineage" / "sequences"


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _sequence(name: str) -> tuple[dict[str, Any], ...]:
    files = sorted(
        (p for p in (SEQUENCES / name).glob("*.json") if not p.name.startswith("_")), key=lambda p: int(p.stem)
    )
    return tuple(_load(p) for p in files)


# Empty without ../shared: the tests that use them are marked `shared` (tests/shared_marker.py) and still collect.
REAL_SOURCES: dict[str, tuple[dict[str, Any], ...]] = (
    {
        "cll": _sequence("compat-tests__CLL"),
        "dataproc": _sequence("compat-tests__spark_dataproc_simple_producer_test_complete"),
        "bigquery": _sequence("compat-tests__spark_dataproc_bigquery_shakespare"),
        "accelerator": (_load(EVENTS / "accelerator__UnitTestColData_CompleteOlColMessage.json"),),
        "quickstart": (_load(EVENTS / "website-docs__quickstart_databricks_COMPLETE_0.12.0.json"),),
        # two sessions of one Fabric notebook (DataHub's fixture's shape): one owner and one process, the newer writes
        "fabric": tuple(
            e
            for number, session in enumerate(
                ("00000000-1111-4222-8333-444444444444", "9b2f6c1e-7d4a-4c3b-a5e8-0f1d2c3b4a59")
            )
            for e in fabric_ctas_run(session, started=FABRIC_T0 + timedelta(hours=number))
        ),
    }
    if SHARED.is_dir()
    else {}
)
# The accelerator cluster carries only its workspace id; this is how the tests name its host.
WORKSPACE_HOSTS = (("3464153745686717", "adb-3464153745686717.17.azuredatabricks.net"),)

INPUT_CHOICES = (
    dr.RAW_ORDERS,
    dr.RAW_CUSTOMERS,
    dr.KAFKA_PAYMENTS,
    dr.Dataset(f"abfss://raw@{dr.LAKE_ACCOUNT}", "refunds", ("id", "amount")),
)
STATEMENTS = ("execute_insert_into_hadoop_fs_relation_command.orders", "create_table_as_select.orders")
NOTEBOOKS = ("/Repos/etl/orders", "/Repos/etl/orders_backfill")


LAST_ENDING = 5  # endings are 0 (COMPLETE lost), 1 (FAIL) or more (COMPLETE)


def generated_run(
    number: int,
    *,
    minutes: int,
    inputs: tuple[dr.Dataset, ...],
    statement: str,
    running: bool,
    notebook: str,
    ending: int,
    may_fail: bool,
    output: dr.Dataset = dr.CURATED_ORDERS,
) -> list[dict[str, Any]]:
    """The events of one generated notebook run `minutes` after T0, with how it ends: 0 its COMPLETE was lost (the
    timer writes it as INCOMPLETE), 1 it failed (if it `may_fail`), more it completed."""
    run = dr.orders_run(number, dr.T0 + timedelta(minutes=minutes), inputs=inputs, statement=statement, running=running)
    emitted = dr.events(replace(run, notebook=notebook, output=output))
    if ending == 0:
        emitted = emitted[:-1]
    elif ending == 1 and may_fail:
        emitted[-1]["eventType"] = "FAIL"  # written nowhere, but counted in its process's run history
    return emitted


@st.composite
def generated_runs(draw: st.DrawFn, first_number: int = 100) -> list[dict[str, Any]]:
    """1 to 4 runs of one or two notebooks: re-runs of a statement (later, with any subset of the inputs), two
    statements writing one output, runs without a Spark job, runs whose COMPLETE never comes, failed runs."""
    events: list[dict[str, Any]] = []
    for number in range(first_number, first_number + draw(st.integers(1, 4))):
        inputs = tuple(draw(st.lists(st.sampled_from(INPUT_CHOICES), max_size=3, unique=True)))
        # the first run does not fail: it writes something, as every scenario must
        events += generated_run(
            number,
            minutes=10 * draw(st.integers(0, 5)),
            inputs=inputs,
            statement=draw(st.sampled_from(STATEMENTS)),
            running=draw(st.booleans()),
            notebook=draw(st.sampled_from(NOTEBOOKS)),
            ending=draw(st.integers(0, LAST_ENDING)),
            may_fail=number > first_number,
        )
    return events


@st.composite
def scenarios(draw: st.DrawFn, real: bool = True) -> list[dict[str, Any]]:
    """The events of a scenario in emission order (what in-order processing sees)."""
    names = draw(st.lists(st.sampled_from(sorted(REAL_SOURCES)), max_size=2, unique=True)) if real else []
    events = [copy.deepcopy(e) for name in names for e in REAL_SOURCES[name]]
    if not names or draw(st.booleans()):
        events += draw(generated_runs())
    if draw(st.booleans()):  # tasks of one job passing temporary datasets, and a run with two outputs
        events += [copy.deepcopy(e) for e in (*tr.etl_chain(), *tr.two_outputs())]
    return events


@st.composite
def deliveries(draw: st.DrawFn, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every event once or more (a queue redelivers), in any order."""
    copies = [event for event in events for _ in range(draw(st.integers(1, 2)))]
    return draw(st.permutations(copies))
