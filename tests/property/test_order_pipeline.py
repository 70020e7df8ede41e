"""Whatever the order (fast, many examples): the runner over a boundary fake of the catalog ends with exactly the
catalog that in-order processing gives, for events delivered in any order with duplicates, one at a time or by
concurrent workers — run history included, so every process's runCount and firstRunTime too — on each run-state
store the product ships (SQLite; Azure Table storage on Azurite, with fewer examples: each costs real HTTP calls).
The same property through the real queue worker and the embedded catalog over HTTP is
tests/property/test_order_worker.py."""

from __future__ import annotations

import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from olparser.adapters.history_stores.sqlite_store import SqliteHistoryStore
from olparser.lineage import LineageOptions
from olparser.naming import MappingEngine
from olparser.pipeline import LineagePipeline, WritePolicy
from tests.property.scenarios import WORKSPACE_HOSTS, deliveries, scenarios
from tests.support.rules import MAPPINGS_PATH
from tests.support.stores import open_test_run_state_store
from tests.unit.pipeline.fake_catalog import FakeCatalog

ENGINE = MappingEngine.from_path(MAPPINGS_PATH)
FAR_FUTURE = time.time() + 2 * 3600  # every held (60 s) or incomplete (3,600 s) run is due, none expired (7 days)
EXAMPLES = {"sqlite": 150, "table": 12}


def catalog_after(events, *, hold: int, workers: int, kind: str = "sqlite", request=None) -> dict:
    """The catalog after processing `events` (in this order, by `workers` threads, on a fresh store of `kind`) and
    then one timer tick."""
    with tempfile.TemporaryDirectory() as folder:
        store = open_test_run_state_store(kind, Path(folder), request)
        history = SqliteHistoryStore(Path(folder) / "history.sqlite3", retention_days=36500)
        catalog = FakeCatalog()
        pipeline = LineagePipeline(
            store,
            ENGINE,
            LineageOptions(workspace_hosts=WORKSPACE_HOSTS),
            catalog,
            WritePolicy(environment_wait_seconds=hold, incomplete_run_seconds=3600),
            history=history,
        )
        if workers == 1:
            for event in events:
                pipeline.process(event)
        else:
            with ThreadPoolExecutor(workers) as pool:
                list(pool.map(pipeline.process, events))
        pipeline.write_due(now=FAR_FUTURE)
        store.close()
        history.close()
        return catalog.state()


def describe(events) -> list[str]:
    return [
        f"{e.get('eventType')} {e['run']['runId'][-4:] if 'run' in e else 'static'} {e.get('eventTime')}"
        for e in events
    ]


def difference(got: dict, expected: dict) -> dict:
    """What differs between two catalogs, small enough to read in a failure."""
    return {
        "missing": sorted(set(expected) - set(got)),
        "extra": sorted(set(got) - set(expected)),
        "changed": {
            k: {
                a: (got[k]["attributes"].get(a), v)
                for a, v in expected[k]["attributes"].items()
                if got[k]["attributes"].get(a) != v
            }
            for k in set(got) & set(expected)
            if got[k] != expected[k]
        },
    }


@st.composite
def cases(draw):
    events = draw(scenarios())
    return events, draw(deliveries(events)), draw(st.sampled_from([0, 60])), draw(st.sampled_from([1, 8]))


def test_any_order_with_duplicates_and_workers_gives_the_in_order_catalog(run_state_store_kind, request):
    kind = run_state_store_kind

    @settings(
        max_examples=EXAMPLES[kind],
        print_blob=False,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(cases())
    def check(case):
        in_order, delivered, hold, workers = case
        got = catalog_after(delivered, hold=hold, workers=workers, kind=kind, request=request)
        expected = catalog_after(in_order, hold=hold, workers=1)  # in order, on SQLite: the reference
        assert got == expected, (describe(in_order), describe(delivered), hold, workers, difference(got, expected))

    check()
