"""Two catalogs written by different paths (backfill, serve) hold the same entities and edges."""

from __future__ import annotations


def assert_same_catalog(backfilled: tuple[list[dict], set], served: tuple[list[dict], set]) -> None:
    """Equal entities (every attribute and relationship) and lineage relations."""
    ours = {(e["typeName"], e["attributes"]["qualifiedName"]): e for e in backfilled[0]}
    theirs = {(e["typeName"], e["attributes"]["qualifiedName"]): e for e in served[0]}
    assert sorted(ours) == sorted(theirs)
    for key, entity in theirs.items():
        assert ours[key] == entity, key
    assert backfilled[1] == served[1]
