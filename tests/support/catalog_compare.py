"""Two catalogs written by different paths (backfill, serve) hold the same entities and edges."""

from __future__ import annotations


def assert_same_catalog(backfilled: tuple[list[dict], set], served: tuple[list[dict], set]) -> None:
    """Equal entities (every attribute and relationship) and lineage relations."""
    ours = {(e["typeName"], e["attributes"]["qualifiedName"]): e for e in backfilled[0]}
    theirs = {(e["typeName"], e["attributes"]["qualifiedName"]): e for e in served[0]}
    assert sorted(ours) == sorted(theirs)
    for key, entity in theirs.items():
        assert ours[key] == entity, (key, _differences(ours[key], entity))
    assert backfilled[1] == served[1]


def _differences(backfilled: dict, served: dict) -> dict:
    """What differs between two versions of an entity: {section.name: (backfilled, served)}."""
    found = {}
    for section in sorted(set(backfilled) | set(served)):
        mine, theirs = backfilled.get(section), served.get(section)
        if isinstance(mine, dict) and isinstance(theirs, dict):
            found.update(
                {
                    f"{section}.{name}": (mine.get(name), theirs.get(name))
                    for name in sorted(set(mine) | set(theirs))
                    if mine.get(name) != theirs.get(name)
                }
            )
        elif mine != theirs:
            found[section] = (mine, theirs)
    return found
