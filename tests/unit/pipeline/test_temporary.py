"""The runner with temporary datasets and several outputs, on each run-state store: temporary datasets are never
entities, a reader lists what their writers read whichever is processed first (a reader written before its writer
arrives is written again), and each process lists the inputs its output derives from."""

from __future__ import annotations

import itertools

from olparser.lineage import LineageOptions
from olparser.pipeline import LineagePipeline, WritePolicy
from tests.support import temporary_runs as tr
from tests.unit.pipeline.fake_catalog import FakeCatalog

NOW = 1_800_000_000.0


def _pipeline(store, engine, catalog) -> LineagePipeline:
    return LineagePipeline(
        store, engine, LineageOptions(), catalog, WritePolicy(environment_wait_seconds=0), clock=lambda: NOW
    )


def catalog_after(store, engine, events, catalog: FakeCatalog | None = None) -> FakeCatalog:
    """The catalog after the runner processed `events` in this order (on `catalog`, else a new one)."""
    catalog = FakeCatalog() if catalog is None else catalog
    pipeline = _pipeline(store, engine, catalog)
    for event in events:
        pipeline.process(event, now=NOW)
    return catalog


def edges(catalog: FakeCatalog) -> dict[str, list[str]]:
    """Each process's output qualifiedName -> its inputs' qualifiedNames (sorted)."""
    found = {}
    for (type_name, _), entity in catalog.state().items():
        if type_name.endswith("_process"):
            [(_, output)] = entity["attributes"]["outputs"]
            found[output] = sorted(qn for _, qn in entity["attributes"]["inputs"])
    return found


def test_a_temporary_dataset_between_runs_is_no_entity_and_the_reader_lists_the_writers_inputs(store, engine):
    catalog = catalog_after(store, engine, tr.etl_chain())
    assert edges(catalog) == tr.ETL_EDGES
    # every entity written: no temporary dataset, no process for a temporary output
    assert sorted(catalog.state()) == [
        ("azure_datalake_gen2_path", f"{tr.LAKE_QN}/curated/orders"),
        ("azure_datalake_gen2_path", f"{tr.LAKE_QN}/raw/orders"),
        ("azure_datalake_gen2_path", f"{tr.LAKE_QN}/raw/rates"),
        ("spark_application", "spark://etl/orders_etl"),
        ("spark_process", f"spark://etl/orders_etl/processes/Save task/{tr.LAKE_QN}/curated/orders"),
    ]


def test_the_reader_first_is_written_again_when_its_writers_come(store, engine, fresh_store):
    in_order = catalog_after(fresh_store(), engine, tr.etl_chain())
    runs = [tr.etl_chain()[2 * i : 2 * i + 2] for i in range(3)]
    for order in itertools.permutations(range(3)):
        catalog = catalog_after(fresh_store(), engine, [event for index in order for event in runs[index]])
        assert catalog.state() == in_order.state(), order
    # the save run alone, before any writer: its temporary input stands for nothing yet (a process without inputs)
    catalog = catalog_after(store, engine, tr.etl_chain()[4:])
    assert edges(catalog) == {f"{tr.LAKE_QN}/curated/orders": []}
    catalog_after(store, engine, tr.etl_chain()[:4], catalog)
    assert edges(catalog) == tr.ETL_EDGES


def test_a_run_with_two_outputs_lists_only_the_inputs_each_derives_from(store, engine):
    assert edges(catalog_after(store, engine, tr.two_outputs())) == tr.TWO_OUTPUT_EDGES


def test_temporary_datasets_of_another_parent_run_are_apart(store, engine):
    # job one loads, job two transforms and saves
    catalog = catalog_after(store, engine, [*tr.etl_chain("one")[:2], *tr.etl_chain("two")[2:]])
    assert edges(catalog) == {f"{tr.LAKE_QN}/curated/orders": [f"{tr.LAKE_QN}/raw/rates"]}
