"""Lineage walks: direction, depth counted in process hops, deleted entities left out."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tests.catalog_server.builders import Catalog, blob, process
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
