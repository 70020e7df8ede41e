"""Uploading LineagePlans to the loopback Atlas stub: call counts, the existence cache, references, splitting."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from olparser.adapters.catalog import CatalogRejected, CatalogUploader, UploadReport
from olparser.lineage.plan import LineagePlan
from olparser.settings import Settings

from .atlas_stub import Fault
from .plans import ADLS, CURATED, NOTEBOOK, PROCESS, RAW, dataset, orders_plan, process


def uploader_for(client, fake_time, **options) -> CatalogUploader:
    return CatalogUploader(
        client, settings=Settings(catalog_cache_seconds=600), clock=fake_time.clock, sleep=fake_time.sleep, **options
    )


def test_new_datasets_take_one_lookup_and_one_bulk_call(atlas, client, fake_time):
    report = uploader_for(client, fake_time).upload(orders_plan())

    assert report.calls == 2
    assert [(r.method, r.path.rsplit("/v2", 1)[1]) for r in atlas.requests] == [
        ("GET", f"/entity/bulk/uniqueAttribute/type/{ADLS}"),
        ("POST", "/entity/bulk"),
    ]
    assert atlas.requests[0].query[:2] == [("attr_0:qualifiedName", RAW), ("attr_1:qualifiedName", CURATED)]
    assert report.created == (
        (ADLS, RAW),
        (ADLS, CURATED),
        ("databricks_notebook", NOTEBOOK),
        ("databricks_process", PROCESS),
    )
    assert report.updated == () and report.referenced == ()
    assert sorted(report.guid_assignments) == ["-1", "-2", "-3", "-4"]
    stored = atlas.find("databricks_process", PROCESS)
    assert stored["relationshipAttributes"]["inputs"] == [{"guid": report.guid_assignments["-1"], "typeName": None}]
    assert stored["relationshipAttributes"]["notebook"]["guid"] == report.guid_assignments["-3"]


def test_created_datasets_are_cached_so_the_next_run_takes_one_call(atlas, client, fake_time):
    uploader = uploader_for(client, fake_time)
    uploader.upload(orders_plan())
    atlas.requests.clear()

    report = uploader.upload(orders_plan())

    assert report.calls == 1
    assert [r.method for r in atlas.requests] == ["POST"]
    # The cached datasets are referenced, not rewritten: the bulk carries only the notebook and the process.
    body = atlas.requests[0].body["entities"]
    assert [e["typeName"] for e in body] == ["databricks_notebook", "databricks_process"]
    assert body[1]["relationshipAttributes"]["inputs"] == [
        {"typeName": ADLS, "uniqueAttributes": {"qualifiedName": RAW}}
    ]
    assert report.referenced == ((ADLS, RAW), (ADLS, CURATED))
    assert report.updated == (("databricks_notebook", NOTEBOOK), ("databricks_process", PROCESS))


def test_existing_scanned_dataset_is_referenced_never_overwritten(atlas, client, fake_time):
    guid = atlas.put(ADLS, RAW, name="orders", description="scanned by Purview", owner="scanner")

    report = uploader_for(client, fake_time).upload(orders_plan())

    assert report.calls == 2
    assert report.referenced == ((ADLS, RAW),)
    assert (ADLS, RAW) not in report.created
    sent = [e["attributes"]["qualifiedName"] for e in atlas.requests[1].body["entities"]]
    assert RAW not in sent
    assert atlas.entities[guid]["attributes"] == {
        "qualifiedName": RAW,
        "name": "orders",
        "description": "scanned by Purview",
        "owner": "scanner",
    }
    assert atlas.find("databricks_process", PROCESS)["relationshipAttributes"]["inputs"] == [
        {"guid": guid, "typeName": ADLS}
    ]


def test_cache_expires_after_its_lifetime(atlas, client, fake_time):
    uploader = uploader_for(client, fake_time)
    uploader.upload(orders_plan())

    fake_time.now += 599
    assert uploader.upload(orders_plan()).calls == 1
    fake_time.now += 601  # 600 s after the last sighting (the second upload refreshed it)
    report = uploader.upload(orders_plan())
    assert report.calls == 2
    assert report.referenced == ((ADLS, RAW), (ADLS, CURATED))


def test_missing_and_failed_datasets_are_not_cached(atlas, client, fake_time):
    uploader = uploader_for(client, fake_time)
    atlas.faults += [Fault(200, body={}), Fault(400, body={"errorCode": "ATLAS-400-00-029", "errorMessage": "no"})]
    with pytest.raises(CatalogRejected):
        uploader.upload(orders_plan())
    assert len(uploader.cache) == 0

    assert uploader.upload(orders_plan()).calls == 2  # looked up again, then created
    assert len(uploader.cache) == 2
    assert uploader.upload(orders_plan()).calls == 1


def test_deleted_entities_count_as_missing(atlas, client, fake_time):
    atlas.put(ADLS, RAW, status="DELETED")
    report = uploader_for(client, fake_time).upload(orders_plan())
    assert report.referenced == ()
    assert (ADLS, RAW) in [tuple(k) for k in report.updated + report.created]
    assert [e["attributes"]["qualifiedName"] for e in atlas.requests[1].body["entities"]][:2] == [RAW, CURATED]


def test_one_lookup_per_type(atlas, client, fake_time):
    plan = LineagePlan(
        external_datasets=(
            dataset("-1", ADLS, RAW),
            dataset("-2", "hive_table", "sales.orders@adb-1"),
            dataset("-3", ADLS, CURATED),
        ),
        entities=(process("-4", PROCESS, ["-1", "-2"], ["-3"]),),
    )
    report = uploader_for(client, fake_time).upload(plan)
    assert report.calls == 3
    assert [r.path.rsplit("/", 1)[1] for r in atlas.calls("GET")] == [ADLS, "hive_table"]
    assert [len(r.query) for r in atlas.calls("GET")] == [4, 3]  # names + the two flags


def test_lookups_keep_urls_short(atlas, client, fake_time):
    names = [f"https://lake.dfs.core.windows.net/raw/{'x' * 150}/part-{i:03d}" for i in range(40)]
    plan = LineagePlan(external_datasets=tuple(dataset(f"-{i + 1}", ADLS, n) for i, n in enumerate(names)))
    report = uploader_for(client, fake_time, max_url_length=2000).upload(plan)

    lookups = atlas.calls("GET")
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(atlas.atlas_url))
    assert [sum(k.endswith(":qualifiedName") for k, _ in r.query) for r in lookups] == [7, 7, 7, 7, 7, 5]
    assert max(len(origin + r.url) for r in lookups) == 1765  # an eighth name (+235) would pass 2,000
    assert [v for r in lookups for k, v in r.query if k.endswith(":qualifiedName")] == names
    assert report.calls == 7 and len(report.created) == 40


def test_bulk_split_keeps_references_resolvable(atlas, client, fake_time, caplog):
    inputs = [dataset(f"-{i}", ADLS, f"{RAW}/part-{i}") for i in (1, 2, 3)]
    # The process comes first in the plan: splitting must still send the datasets before it.
    plan = LineagePlan(entities=(process("-9", PROCESS, ["-1", "-2", "-3"], []),), external_datasets=tuple(inputs))

    with caplog.at_level("INFO", logger="olparser.adapters.catalog.uploader"):
        report = uploader_for(client, fake_time, bulk_size=2).upload(plan)

    assert [r.getMessage() for r in caplog.records] == [
        "uploaded 4 entities: 4 created, 0 updated, 0 unchanged, 0 referenced, 3 calls"
    ]
    bulks = atlas.calls("POST")
    assert [[e["guid"] for e in r.body["entities"]] for r in bulks] == [["-1", "-2"], ["-3", "-9"]]
    assert bulks[1].body["entities"][1]["relationshipAttributes"]["inputs"] == [
        {"typeName": ADLS, "uniqueAttributes": {"qualifiedName": f"{RAW}/part-1"}},
        {"typeName": ADLS, "uniqueAttributes": {"qualifiedName": f"{RAW}/part-2"}},
        {"guid": "-3"},
    ]
    assert report.calls == 3
    # Each entity counted once: part-1 and part-2, created by the first request, gain the process's lineage edge in
    # the second (which answers them as updated), and stay "created" (the log line said "2 created, 2 updated")
    assert sorted(report.created) == [(ADLS, f"{RAW}/part-{i}") for i in (1, 2, 3)] + [("databricks_process", PROCESS)]
    assert report.updated == ()
    stored_inputs = atlas.find("databricks_process", PROCESS)["relationshipAttributes"]["inputs"]
    assert [i["guid"] for i in stored_inputs] == [atlas.find(ADLS, f"{RAW}/part-{i}")["guid"] for i in (1, 2, 3)]


def test_duplicate_external_datasets_are_sent_once(atlas, client, fake_time):
    plan = LineagePlan(
        external_datasets=(dataset("-1", ADLS, RAW), dataset("-2", ADLS, RAW)),
        entities=(process("-3", PROCESS, ["-1"], ["-2"]),),
    )
    report = uploader_for(client, fake_time).upload(plan)
    body = atlas.requests[1].body["entities"]
    assert [e["guid"] for e in body] == ["-1", "-3"]
    assert body[1]["relationshipAttributes"]["outputs"] == [{"guid": "-1"}]
    assert report.created == ((ADLS, RAW), ("databricks_process", PROCESS))


def test_rejected_bulk_is_not_retried_and_names_the_problem(atlas, client, fake_time):
    uploader = uploader_for(client, fake_time)
    atlas.put(ADLS, RAW)
    atlas.put(ADLS, CURATED)
    atlas.faults += [
        Fault(200, body={}),
        Fault(
            400,
            body={
                "errorCode": "ATLAS-400-00-014",
                "errorMessage": "Type databricks_process with name x does not exist",
            },
        ),
    ]
    with pytest.raises(CatalogRejected, match="ATLAS-400-00-014: Type databricks_process"):
        uploader.upload(orders_plan())
    assert len(atlas.requests) == 2 and fake_time.sleeps == []


def test_throttled_bulk_is_retried_and_counted(atlas, client, fake_time):
    atlas.faults += [
        Fault(200, body={}),
        Fault(429, {"Retry-After": "3"}, {"errorCode": "ATLAS-429", "errorMessage": "slow down"}),
    ]
    report = uploader_for(client, fake_time).upload(orders_plan())
    assert fake_time.sleeps == [3.0]
    assert report.calls == 3


def test_empty_plan_makes_no_call(atlas, client, fake_time):
    assert uploader_for(client, fake_time).upload(LineagePlan()) == UploadReport()
    assert atlas.requests == []


def test_a_cached_dataset_deleted_meanwhile_is_looked_up_and_created_again(atlas, client, fake_time):
    uploader = uploader_for(client, fake_time)
    uploader.upload(orders_plan())
    raw = atlas.find(ADLS, RAW)
    del atlas.entities[raw["guid"]]  # removed from the catalog behind the cache's back
    atlas.requests.clear()

    report = uploader.upload(orders_plan())

    assert [r.method for r in atlas.requests] == ["POST", "GET", "POST"]
    assert report.calls == 3
    assert report.created == ((ADLS, RAW),)
    assert report.referenced == ((ADLS, CURATED),)
    assert atlas.find(ADLS, RAW) is not None
