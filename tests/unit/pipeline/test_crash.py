"""A worker may die between any two steps of a write — two store writes, or a store write and a catalog call — and
the catalog must still end up as in-order processing leaves it once the message is redelivered and the timer has
run. The test first runs the scenario once to list every step (each catalog call, and each store write: a Table
storage request on the Table store, a store transaction on SQLite), then runs it again once per step boundary with
a crash injected right after that step, on each store. A new step in the protocol is a new boundary here."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any, Callable

import pytest

from olparser.adapters.history_stores.sqlite_store import SqliteHistoryStore
from olparser.adapters.run_state.sqlite_store import SqliteRunStateStore
from olparser.lineage import LineageOptions
from olparser.pipeline import LineagePipeline, WritePolicy
from tests.support import databricks_runs as dr
from tests.unit.pipeline.fake_catalog import FakeCatalog

pytestmark = pytest.mark.slow  # a whole scenario per step boundary: on Azurite, minutes on a busy machine

NOW = 1_800_000_000.0
FAR_FUTURE = NOW + 10 * 86400  # every pending intention, held or incomplete run is due; the timer runs once
RAW_RETURNS = dr.Dataset("dbfs", "/mnt/raw/returns")
# SQLite: each method that writes is one transaction. Table storage: each request that writes.
SQLITE_WRITES = (
    "merge_versioned",
    "claim",
    "commit",
    "settle",
    "done",
    "finish_deletes",
    "schedule",
    "postpone",
    "register_interim",
    "forget_interim",
    "abandoned_deletes",
    "record_lifecycle",
)
TABLE_WRITES = ("create_entity", "update_entity", "upsert_entity", "delete_entity", "submit_transaction")
CATALOG_CALLS = ("upload", "delete")
HISTORY_SQLITE_WRITES = ("record", "refreshed", "purge")


class Crash(Exception):
    """The worker died here."""


class Steps:
    """Numbers every step as it completes; raises Crash right after step number `crash_after`."""

    def __init__(self, crash_after: int | None = None) -> None:
        self.crash_after = crash_after
        self.names: list[str] = []

    def wrap(self, name: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def step(*args: Any, **kwargs: Any) -> Any:
            result = call(*args, **kwargs)
            self.names.append(name)
            if self.crash_after is not None and len(self.names) - 1 == self.crash_after:
                self.crash_after = None  # once: the replacement worker does not crash
                raise Crash(name)
            return result

        return step


class Stepped:
    """`target` with the methods `names` counted as steps."""

    def __init__(self, target: Any, names: tuple[str, ...], steps: Steps, prefix: str) -> None:
        self._target = target
        for name in names:
            setattr(self, name, steps.wrap(f"{prefix}.{name}", getattr(target, name)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


def scenario() -> list[dict]:
    """An older run that never sent its environment (its interim process stays), and a newer run whose COMPLETE
    comes first — it takes the interim process over — then its RUNNING: the newer run drops the interim process
    (restored from the older run, with the older run's inputs) and its own `/mnt/raw/returns` placeholder (deleted:
    no run uses it any more)."""
    older = dr.orders_run(1)
    newer = dr.orders_run(2, dr.T0 + timedelta(hours=1), inputs=(dr.RAW_ORDERS, RAW_RETURNS))
    _, _, older_complete = dr.events(older)
    start, running, complete = dr.events(newer)
    return [older_complete, start, complete, running]


def catalog_after(store, engine, events: list[dict], steps: Steps | None, history=None) -> dict:
    """Process `events` in order; a crash makes the message come back (processed again, without crashing), as the
    queue redelivers it; then the timer runs once. `history`: a run-history store, its writes counted as steps too."""
    catalog: Any = FakeCatalog()
    if steps is not None:
        catalog = Stepped(catalog, CATALOG_CALLS, steps, "catalog")
        if isinstance(store, SqliteRunStateStore):
            store = Stepped(store, SQLITE_WRITES, steps, "store")
        else:
            store.table = Stepped(store.table, TABLE_WRITES, steps, "table")
        if isinstance(history, SqliteHistoryStore):
            history = Stepped(history, HISTORY_SQLITE_WRITES, steps, "history")
        elif history is not None:
            history.table = Stepped(history.table, TABLE_WRITES, steps, "history-table")
    pipeline = LineagePipeline(
        store,
        engine,
        LineageOptions(),
        catalog,
        WritePolicy(environment_wait_seconds=0),
        clock=lambda: NOW,
        sleep=lambda _: None,
        history=history,
    )
    for event in events:
        try:
            pipeline.process(event, now=NOW)
        except Crash:
            pipeline.process(event, now=NOW)  # redelivered
    try:
        pipeline.write_due(now=FAR_FUTURE)
    except Crash:
        pipeline.write_due(now=FAR_FUTURE)  # the next tick
    return catalog.state() if steps is None else catalog._target.state()


def crash_failures(
    events: list[dict], engine, expected: dict, listed: Steps, fresh_store, fresh_history=lambda: None
) -> list:
    """Runs the scenario once per step boundary with a crash right after it; what differs from `expected`."""

    def crash_after(boundary: int) -> list:
        got = catalog_after(stores[boundary], engine, events, Steps(crash_after=boundary), histories[boundary])
        if got == expected:
            return []
        return [
            (
                boundary,
                listed.names[boundary],
                sorted(set(got) ^ set(expected))
                or [
                    (
                        k,
                        {
                            a: (v, got[k]["attributes"].get(a))
                            for a, v in expected[k]["attributes"].items()
                            if got[k]["attributes"].get(a) != v
                        },
                    )
                    for k in expected
                    if got[k] != expected[k]
                ],
            )
        ]

    stores = [fresh_store() for _ in listed.names]
    histories = [fresh_history() for _ in listed.names]
    with ThreadPoolExecutor(4) as pool:  # independent scenarios: each its own store and catalog
        return [failure for found in pool.map(crash_after, range(len(listed.names))) for failure in found]


def test_a_crash_between_any_two_steps_of_a_write_leaves_the_in_order_catalog(run_state_store, fresh_store, engine):
    events = scenario()
    expected = catalog_after(fresh_store(), engine, events, None)
    restored = ("spark_process", next(k[1] for k in expected if k[0] == "spark_process"))
    assert sorted(q for _, q in expected[restored]["attributes"]["inputs"]) == [
        "dbfs:/mnt/raw/customers",
        "dbfs:/mnt/raw/orders",
    ]
    assert ("openlineage_dataset", "dbfs:/mnt/raw/returns") not in expected

    listed = Steps()
    assert catalog_after(run_state_store, engine, events, listed) == expected
    assert {"catalog.upload", "catalog.delete"} <= set(listed.names)

    failures = crash_failures(events, engine, expected, listed, fresh_store)
    assert failures == [], f"{len(failures)} of {len(listed.names)} crash points differ: {failures}"


def history_scenario() -> list[dict]:
    """The newer run never sends its environment: it writes the interim (databricks_shell) process. The older run's
    COMPLETE comes next and joins that process's history without writing it (a newer run wrote it): the process is
    rewritten from the newer run with runCount 2. Then the older run's RUNNING moves it to its notebook's process,
    and the interim process must be rewritten once more, with runCount 1."""
    older = dr.orders_run(1)
    newer = dr.orders_run(2, dr.T0 + timedelta(hours=1), running=False)
    _, older_running, older_complete = dr.events(older)
    return [*dr.events(newer), older_complete, older_running]


def test_with_the_run_history_a_crash_anywhere_leaves_the_in_order_run_counts(fresh_store, fresh_history, engine):
    """A worker that dies after the history changed and before the catalog shows it leaves the rewrite to the
    message's redelivery, although the record it writes again is the same."""
    events = history_scenario()
    expected = catalog_after(fresh_store(), engine, events, None, fresh_history())
    counts = sorted(
        (key[0], key[1].split("/processes/", 1)[0].rsplit("/", 1)[-1], entity["attributes"]["runCount"])
        for key, entity in expected.items()
        if key[0] in ("spark_process", "databricks_process")
    )
    assert counts == [("databricks_process", "orders", 1), ("spark_process", "databricks_shell", 1)]

    listed = Steps()
    assert catalog_after(fresh_store(), engine, events, listed, fresh_history()) == expected
    assert any(name.startswith("history") for name in listed.names)

    failures = crash_failures(events, engine, expected, listed, fresh_store, fresh_history)
    assert failures == [], f"{len(failures)} of {len(listed.names)} crash points differ: {failures}"
