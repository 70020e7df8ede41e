"""The catalog rules every layer applies, each written once: which relations of an entity are active, which processes
still use an entity, what is forgotten once entities are gone from the catalog, and how often each kind of catalog
work is tried. Pure: the rules that call the catalog (the ACTIVE lookup, a RetryPolicy for a kind of call) are in
olparser/adapters/catalog/rules.py, the layer that may do I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Protocol

Key = tuple[str, str]  # (typeName, qualifiedName)

# The relationship attributes through which processes use a dataset: as an input, as an output
USED_BY = ("inputToProcesses", "outputFromProcesses")


def related(entity: Mapping[str, Any], names: Iterable[str]) -> list[dict[str, Any]]:
    """The related objects under these relationship attributes of a catalog entity that are active, the related
    entity and the relationship both (a deleted process, or a process that dropped the entity, no longer counts)."""
    relations = entity.get("relationshipAttributes") or {}
    return [
        item
        for name in names
        for item in relations.get(name) or []
        if isinstance(item, dict)
        and item.get("entityStatus", "ACTIVE") == "ACTIVE"
        and item.get("relationshipStatus", "ACTIVE") == "ACTIVE"
    ]


def used_by(entity: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The in-use test: the active processes that still read or write this entity, as the catalog relates them (an
    entity read with its relationship attributes). Empty: no process uses it."""
    return related(entity, USED_BY)


class InterimRegistry(Protocol):
    """The run-state store's registry of interim datasets (olparser.runs.RunStateStore)."""

    def forget_interim(self, keys: Iterable[Key]) -> None: ...


class Forgetting(Protocol):
    """What answers about entities are kept (the resolver: ScannedAssetResolver.forget)."""

    def forget(self, keys: Iterable[Key]) -> None: ...


def forget_gone(
    registry: InterimRegistry, resolver: Forgetting | None, keys: Iterable[Key], *, kept: Iterable[Key] = ()
) -> None:
    """The clean-up after a delete: entities gone from the catalog (`keys` the delete was asked for, or found
    vanished, but those it `kept`) are no longer interim datasets to re-link, and the resolver (when there is one)
    forgets what it knew of them."""
    kept = set(kept)
    gone = [key for key in keys if key not in kept]
    registry.forget_interim(gone)
    if resolver is not None:
        resolver.forget(gone)


@dataclass(frozen=True)
class Retries:
    """How one kind of catalog work is tried: at most `attempts` times; before a second attempt `first_wait` seconds
    (doubled after each failure, each wait capped at `max_wait`; 0: again at once), all attempts within
    `total_seconds` (waits included)."""

    attempts: int
    first_wait: float = 0.0
    max_wait: float = 0.0
    total_seconds: float = float("inf")


# One HTTP request to the catalog that failed for a reason a later attempt may not see (408, 429, 5xx, connection
# errors, timeouts, a token): CATALOG_MAX_ATTEMPTS replaces the attempts (olparser/adapters/catalog/retry.py)
REQUEST = "request"
# The same request asked for a person waiting at a command line (qn-tester): an answer, or the reason, quickly
INTERACTIVE = "interactive request"
# A run's write whose linked scanned asset vanished meanwhile (the plan is resolved again), or whose run changed while
# it was written (built again from the newer state): tried again at once
REBUILD = "rebuild"

RETRIES: dict[str, Retries] = {
    REQUEST: Retries(attempts=6, first_wait=0.5, max_wait=30.0, total_seconds=120.0),
    INTERACTIVE: Retries(attempts=2, first_wait=0.5, max_wait=30.0, total_seconds=120.0),
    REBUILD: Retries(attempts=5),
}
