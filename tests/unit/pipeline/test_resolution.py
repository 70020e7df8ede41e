"""The runner with resolution: a plan is resolved and linked before it is fingerprinted and claimed, interim datasets
are registered when the upload creates them and become connector-owned, a dataset later linked leaves its interim
entity to be deleted, a taken-over entity leaves the registry, and a linked asset that vanished is resolved again. The
resolver and the catalog are boundary fakes here; tests/catalog_server/test_relink.py and the end-to-end tests run
the real ones."""

from __future__ import annotations

from olparser.adapters.catalog.resolver import Resolution
from olparser.resolution.model import Candidate
from olparser.runs.store import TOMBSTONE_SECONDS
from tests.support import databricks_runs as dr
from tests.support.pipelines import NOTEBOOK, STATEMENT, Clock, make_pipeline
from tests.unit.pipeline.fake_catalog import FakeCatalog

LAKE = "https://contosolake.dfs.core.windows.net"
PATH, SET = "azure_datalake_gen2_path", "azure_datalake_gen2_resource_set"
OUTPUT = (PATH, f"{LAKE}/curated/orders")
OUTPUT_SET = (SET, f"{LAKE}/curated/orders/{{SparkPartitions}}")
RAW = (PATH, f"{LAKE}/raw/orders")
PROCESS = ("databricks_process", f"{NOTEBOOK}/processes/{STATEMENT}/{LAKE}/curated/orders")


class FakeResolver:
    """Links what `links` says; every other dataset of a scanner type is interim (with one candidate)."""

    def __init__(self) -> None:
        self.links: dict = {}
        self.taken: frozenset = frozenset()
        self.forgotten: list = []
        self.noted: list = []
        self.resolved = 0

    def resolve(self, datasets, *, fresh=False, extra=None, tasks=()) -> Resolution:
        self.resolved += 1
        defaults = [d.default for d in datasets]
        interim = {
            k: (Candidate(SET, f"{k[1]}/{{SparkPartitions}}", "resource set"),)
            for k in defaults
            if k[0] == PATH and k not in self.links
        }
        return Resolution(
            links={k: self.links[k] for k in defaults if k in self.links},
            interim=interim,
            taken_over=self.taken,
            calls=1,
        )

    def note_interim(self, keys) -> None:
        self.noted += sorted(keys)

    def forget(self, keys) -> None:
        self.forgotten += sorted(keys)

    def forget_datasets(self, datasets) -> None:
        self.forgotten += sorted(d.default for d in datasets)


def write(pipeline, number: int = 1):
    return [pipeline.process(e) for e in dr.events(dr.orders_run(number, dr.T0.replace(hour=8 + number)))][-1]


def test_interim_datasets_are_registered_when_created_and_owned_by_the_run(store, engine):
    catalog, resolver = FakeCatalog(), FakeResolver()
    outcome = write(make_pipeline(store, engine, catalog, resolver=resolver))
    assert (outcome.status, outcome.catalog_calls) == ("written", 1 + 1)  # resolution, then the bulk write
    registered = [e.key for e in store.due_interim(10)]
    assert registered == [OUTPUT, (PATH, f"{LAKE}/raw/customers"), RAW]
    assert resolver.noted == sorted(registered)
    assert store.due_interim(1)[0].candidates == (
        '[{"typeName":"azure_datalake_gen2_resource_set","qualifiedName":"https://contosolake.dfs.core.windows.net/'
        'curated/orders/{SparkPartitions}","origin":"resource set"}]'
    )


def test_a_run_linked_to_the_scanned_asset_writes_no_path_and_releases_the_interim_one(store, engine):
    catalog, resolver = FakeCatalog(), FakeResolver()
    pipeline = make_pipeline(store, engine, catalog, resolver=resolver)
    write(pipeline, 1)
    resolver.links = {OUTPUT: OUTPUT_SET}
    catalog.entities[OUTPUT_SET] = {"typeName": SET, "attributes": {"qualifiedName": OUTPUT_SET[1]}}
    again = pipeline.process(
        dict(dr.events(dr.orders_run(1, dr.T0.replace(hour=9)))[-1], eventTime="2026-03-02T09:00:05.000Z")
    )  # the same run, a later COMPLETE

    assert (again.status, again.deleted) == ("written", 1)  # the interim path: no run uses it any more
    assert OUTPUT not in catalog.entities
    assert store.interim_keys([OUTPUT, RAW]) == {RAW}  # deleted: no longer an interim dataset to re-link
    assert catalog.entities[PROCESS]["attributes"]["outputs"] == [OUTPUT_SET]
    assert not any(OUTPUT in (e.get("attributes") or {}).values() for e in catalog.uploads[-1].external_datasets)


def test_the_timers_retry_of_a_failed_delete_cleans_up_as_the_commit_would_have(store, engine):
    catalog, resolver, clock = FakeCatalog(), FakeResolver(), Clock()
    pipeline = make_pipeline(store, engine, catalog, clock, resolver=resolver)
    write(pipeline, 1)
    resolver.links = {OUTPUT: OUTPUT_SET}
    catalog.entities[OUTPUT_SET] = {"typeName": SET, "attributes": {"qualifiedName": OUTPUT_SET[1]}}
    catalog.fail_deletes = 1
    again = pipeline.process(
        dict(dr.events(dr.orders_run(1, dr.T0.replace(hour=9)))[-1], eventTime="2026-03-02T09:00:05.000Z")
    )  # the interim path is released, its delete fails
    assert (again.status, again.deleted) == ("written", 0)
    assert OUTPUT in catalog.entities
    assert store.interim_keys([OUTPUT, RAW]) == {OUTPUT, RAW}

    clock.now += TOMBSTONE_SECONDS
    assert pipeline.write_due().deletes_retried == 1
    assert OUTPUT not in catalog.entities
    assert store.interim_keys([OUTPUT, RAW]) == {RAW}  # deleted: no longer an interim dataset to re-link
    assert resolver.forgotten == [OUTPUT]


def test_a_linked_asset_that_vanished_is_forgotten_and_the_plan_resolved_again(store, engine):
    catalog, resolver = FakeCatalog(), FakeResolver()
    resolver.links = {OUTPUT: OUTPUT_SET}
    catalog.missing = {OUTPUT_SET}  # deleted from the catalog after the resolver saw it

    def vanish_for_good(datasets, *, fresh=False, extra=None, tasks=(), resolve=resolver.resolve):
        if resolver.forgotten:
            resolver.links = {}
        return resolve(datasets, fresh=fresh, extra=extra, tasks=tasks)

    resolver.resolve = vanish_for_good  # type: ignore[method-assign]
    outcome = write(make_pipeline(store, engine, catalog, resolver=resolver))
    assert outcome.status == "written"
    assert resolver.forgotten == [OUTPUT, (PATH, f"{LAKE}/raw/customers"), RAW]  # every answer about the plan
    assert catalog.entities[PROCESS]["attributes"]["outputs"] == [OUTPUT]  # the interim path instead


def test_an_entity_a_scan_took_over_leaves_the_registry(store, engine):
    catalog, resolver = FakeCatalog(), FakeResolver()
    pipeline = make_pipeline(store, engine, catalog, resolver=resolver)
    write(pipeline, 1)
    resolver.links, resolver.taken = {OUTPUT: OUTPUT}, frozenset({OUTPUT})
    write(pipeline, 2)
    assert store.interim_keys([OUTPUT, RAW]) == {RAW}
