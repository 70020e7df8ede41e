"""Lineage walks: direction, depth counted in process hops, deleted entities left out; the Data Map's next page of an
entity's immediate neighbours."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
import requests

from tests.catalog_server.builders import Catalog, blob, process
from tests.support.atlas_answers import errors
from tools.catalog import CatalogServer
from tools.catalog.errors import AtlasError
from tools.catalog.lineage import entity_lineage
from tools.catalog.mutations import delete_entities


@pytest.fixture
def chain(tmp_path: Path) -> Iterator[tuple[Catalog, dict[str, str]]]:
    """d0 -> p1 -> d1 -> p2 -> d2 -> p3 -> d3, returned with name -> guid."""
    cat = Catalog(tmp_path / "c.sqlite")
    entities = [blob(f"-{i}", f"d{i}") for i in range(4)]
    entities += [process(f"-{10 + i}", f"p{i}", [{"guid": f"-{i - 1}"}], [{"guid": f"-{i}"}]) for i in (1, 2, 3)]
    assigned = cat.upsert(*entities)["guidAssignments"]
    names = {f"d{i}": assigned[f"-{i}"] for i in range(4)} | {f"p{i}": assigned[f"-{10 + i}"] for i in (1, 2, 3)}
    yield cat, names
    cat.store.close()


def walk(cat: Catalog, names: dict[str, str], base: str, direction: str, depth: int) -> tuple[list[str], list]:
    by_guid = {g: n for n, g in names.items()}
    with cat.store.read() as session:
        result = entity_lineage(session, cat.types.registry, names[base], direction, depth)
    nodes = sorted(by_guid[g] for g in result["guidEntityMap"])
    edges = sorted((by_guid[r["fromEntityId"]], by_guid[r["toEntityId"]]) for r in result["relations"])
    return nodes, edges


def test_depth_counts_process_hops_from_a_dataset(chain: tuple[Catalog, dict[str, str]]) -> None:
    cat, names = chain
    assert walk(cat, names, "d0", "OUTPUT", 2) == (
        ["d0", "d1", "d2", "p1", "p2"],
        [("d0", "p1"), ("d1", "p2"), ("p1", "d1"), ("p2", "d2")],
    )
    assert walk(cat, names, "d3", "INPUT", 1) == (["d2", "d3", "p3"], [("d2", "p3"), ("p3", "d3")])
    assert walk(cat, names, "d0", "INPUT", 3) == (["d0"], [])
    assert walk(cat, names, "d0", "OUTPUT", 0)[0] == ["d0", "d1", "d2", "d3", "p1", "p2", "p3"]


def test_depth_from_a_process_and_both_directions(chain: tuple[Catalog, dict[str, str]]) -> None:
    cat, names = chain
    assert walk(cat, names, "p2", "BOTH", 1) == (["d1", "d2", "p2"], [("d1", "p2"), ("p2", "d2")])
    assert walk(cat, names, "d1", "BOTH", 1)[0] == ["d0", "d1", "d2", "p1", "p2"]


def test_deleted_entities_cut_the_walk(chain: tuple[Catalog, dict[str, str]]) -> None:
    cat, names = chain
    with cat.store.write() as session:
        delete_entities(session, [names["p2"]], "tester")
    assert walk(cat, names, "d0", "OUTPUT", 0)[0] == ["d0", "d1", "p1"]


def test_only_datasets_and_processes_have_lineage(chain: tuple[Catalog, dict[str, str]]) -> None:
    cat, _ = chain
    guid = cat.upsert(
        {"typeName": "azure_storage_account", "guid": "-1", "attributes": {"qualifiedName": "acct", "name": "acct"}}
    )["guidAssignments"]["-1"]
    with cat.store.read() as session, pytest.raises(AtlasError) as raised:
        entity_lineage(session, cat.types.registry, guid)
    assert raised.value.code == "ATLAS-404-00-011"


# --- the Data Map's next page: GET /lineage/{guid}/next ----------------------------------------------------------
def _next(catalog: CatalogServer, guid: str, **params: object) -> requests.Response:
    return requests.get(
        f"{catalog.url}/datamap/api/lineage/{guid}/next",
        params={"api-version": "2023-09-01", **params},
        timeout=10,
    )


@pytest.fixture
def fan(open_catalog: CatalogServer) -> tuple[CatalogServer, dict[str, str]]:
    """load writes d0; pc, pa, pb (in that order) read d0 and write oc, oa, ob; name -> guid."""
    entities = [blob("-d0", "d0"), process("-load", "load", [], [{"guid": "-d0"}])]
    for name in ("c", "a", "b"):
        entities += [
            blob(f"-o{name}", f"o{name}"),
            process(f"-p{name}", f"p{name}", [{"guid": "-d0"}], [{"guid": f"-o{name}"}]),
        ]
    answer = requests.post(f"{open_catalog.atlas_url}/entity/bulk", timeout=10, json={"entities": entities})
    assert answer.status_code == 200, answer.text
    return open_catalog, {placeholder[1:]: guid for placeholder, guid in answer.json()["guidAssignments"].items()}


def page(answer: requests.Response, names: dict[str, str]) -> tuple:
    """(width, children, the entities' names, the relations as name pairs) of a next-page answer."""
    assert answer.status_code == 200, answer.text
    body, by_guid = answer.json(), {g: n for n, g in names.items()}
    return (
        body["lineageWidth"],
        body["childrenCount"],
        sorted(by_guid[g] for g in body["guidEntityMap"]),
        [(by_guid[r["fromEntityId"]], by_guid[r["toEntityId"]]) for r in body["relations"]],
    )


def test_next_page_pages_the_immediate_neighbours_by_name(fan: tuple[CatalogServer, dict[str, str]]) -> None:
    catalog, g = fan
    assert page(_next(catalog, g["d0"], direction="OUTPUT", limit=2), g) == (
        2,
        3,
        ["d0", "pa", "pb"],
        [("d0", "pa"), ("d0", "pb")],
    )
    assert page(_next(catalog, g["d0"], direction="OUTPUT", offset=2, limit=2), g) == (
        1,
        3,
        ["d0", "pc"],
        [("d0", "pc")],
    )
    # without a limit there is no paging (the spec's default)
    assert page(_next(catalog, g["d0"], direction="OUTPUT"), g)[:3] == (3, 3, ["d0", "pa", "pb", "pc"])
    assert page(_next(catalog, g["d0"], direction="INPUT"), g) == (1, 1, ["d0", "load"], [("load", "d0")])
    assert page(_next(catalog, g["d0"], direction="BOTH", limit=2), g) == (
        2,
        4,
        ["d0", "load", "pa"],
        [("load", "d0"), ("d0", "pa")],
    )
    # from a process: its datasets
    assert page(_next(catalog, g["pa"], direction="BOTH"), g) == (
        2,
        2,
        ["d0", "oa", "pa"],
        [("d0", "pa"), ("pa", "oa")],
    )
    body = _next(catalog, g["d0"], direction="input").json()
    assert (body["baseEntityGuid"], body["lineageDirection"], body["lineageDepth"]) == (g["d0"], "INPUT", 1)
    assert body["guidEntityMap"][g["load"]]["displayText"] == "load"


def test_next_page_leaves_deleted_neighbours_out(fan: tuple[CatalogServer, dict[str, str]]) -> None:
    catalog, g = fan
    assert requests.delete(f"{catalog.atlas_url}/entity/guid/{g['pa']}", timeout=10).status_code == 200
    assert page(_next(catalog, g["d0"], direction="OUTPUT", limit=1), g) == (1, 2, ["d0", "pb"], [("d0", "pb")])


def test_next_page_refusals_name_the_problem(fan: tuple[CatalogServer, dict[str, str]]) -> None:
    catalog, g = fan
    account = requests.post(
        f"{catalog.atlas_url}/entity",
        timeout=10,
        json={"entity": {"typeName": "azure_storage_account", "attributes": {"qualifiedName": "acct", "name": "acct"}}},
    ).json()["mutatedEntities"]["CREATE"][0]["guid"]
    answers = {
        "no direction": _next(catalog, g["d0"]),
        "sideways": _next(catalog, g["d0"], direction="SIDEWAYS"),
        "negative offset": _next(catalog, g["d0"], direction="INPUT", offset=-1),
        "no room": _next(catalog, g["d0"], direction="INPUT", limit=0),
        "not a number": _next(catalog, g["d0"], direction="INPUT", limit="ten"),
        "unknown": _next(catalog, "nope", direction="INPUT"),
        "no lineage": _next(catalog, account, direction="INPUT"),
    }
    assert errors(answers) == {
        "no direction": (400, "ATLAS-400-00-026", "Invalid lineage query parameters passed direction: None"),
        "sideways": (400, "ATLAS-400-00-026", "Invalid lineage query parameters passed direction: SIDEWAYS"),
        "negative offset": (400, "ATLAS-400-00-026", "Invalid lineage query parameters passed offset: -1"),
        "no room": (400, "ATLAS-400-00-026", "Invalid lineage query parameters passed limit: 0"),
        "not a number": (400, "ATLAS-400-00-026", "Invalid lineage query parameters passed limit: ten"),
        "unknown": (404, "ATLAS-404-00-005", "Given instance guid nope is invalid/not found"),
        "no lineage": (
            404,
            "ATLAS-404-00-011",
            f"Given instance guid {account} with type azure_storage_account is not a valid lineage entity type.",
        ),
    }
