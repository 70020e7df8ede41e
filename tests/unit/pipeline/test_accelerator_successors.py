"""A process taken over from the accelerator retires when a run writes its successor — the connector's process of
the same owner and output — with the placeholder only it used, through the ledger (olparser/pipeline/accelerator.py);
on both run-state stores. The catalog is a boundary fake; tests/e2e/test_accelerator_estate.py runs the real one."""

from __future__ import annotations

from olparser.lineage.accelerator import PLACEHOLDER_TYPE, takeover_run_key
from olparser.pipeline.accelerator import Takeovers
from olparser.runs.store import Takeover
from tests.support import databricks_runs as dr
from tests.support.pipelines import NOTEBOOK, NOW, make_pipeline
from tests.unit.pipeline.fake_catalog import FakeCatalog

OUTPUT = "https://contosolake.dfs.core.windows.net/curated/orders"  # /mnt/curated/orders through its mount
ACCELERATOR_PROCESS = ("databricks_process", f"{NOTEBOOK}/processes/{'A' * 32}->{'B' * 32}")
PLACEHOLDER = (PLACEHOLDER_TYPE, OUTPUT.lower())


def take_over(store, catalog: FakeCatalog, output: str = OUTPUT) -> Takeover:
    """What `migrate accelerator --apply` leaves for a process without a successor yet."""
    for key in (ACCELERATOR_PROCESS, PLACEHOLDER):
        catalog.entities[key] = {"typeName": key[0], "attributes": {"qualifiedName": key[1]}}
    entry = Takeover(
        ACCELERATOR_PROCESS,
        NOTEBOOK,
        output.lower(),
        takeover_run_key(ACCELERATOR_PROCESS),
        (ACCELERATOR_PROCESS, PLACEHOLDER),
        NOW,
        NOW,
    )
    store.claim(entry.run_key, entry.keys, now=NOW)
    store.commit(entry.run_key, entry.keys, version=None, fingerprint="accelerator", now=NOW)
    store.register_takeovers([entry])
    return entry


def write_orders_run(pipeline) -> None:
    for event in dr.events(dr.orders_run(1)):
        pipeline.process(event, now=NOW)


def test_the_run_that_writes_the_successor_retires_the_accelerators_process(store, engine):
    catalog = FakeCatalog()
    take_over(store, catalog)
    write_orders_run(make_pipeline(store, engine, catalog, takeovers=Takeovers()))

    assert ACCELERATOR_PROCESS not in catalog.entities and PLACEHOLDER not in catalog.entities
    assert [k for k in catalog.keys("databricks_process")] == [
        ("databricks_process", f"{NOTEBOOK}/processes/execute_insert_into_hadoop_fs_relation_command.orders/{OUTPUT}")
    ]
    assert store.pending_takeovers() == []
    assert store.owned([ACCELERATOR_PROCESS, PLACEHOLDER]) == set()


def test_a_run_of_another_output_leaves_it_waiting(store, engine):
    catalog = FakeCatalog()
    entry = take_over(store, catalog, output="https://contosolake.dfs.core.windows.net/curated/elsewhere")
    write_orders_run(make_pipeline(store, engine, catalog, takeovers=Takeovers()))

    assert ACCELERATOR_PROCESS in catalog.entities and PLACEHOLDER in catalog.entities
    assert store.pending_takeovers() == [entry]
    assert store.owned([ACCELERATOR_PROCESS, PLACEHOLDER]) == {ACCELERATOR_PROCESS, PLACEHOLDER}
