"""Placing a run's entities in a Purview collection: the rules (olparser/lineage/placement.py), else the collection of the
run's output's scanned asset, else PURVIEW_COLLECTION, else the root.

The collection goes as `collectionId` on the run's bulk write, which creates the new entities there and moves the
connector's existing ones sent in it (Data Map API 2023-09-01: "the collection where entities will be moved to").
Scanned assets are only referenced, never sent, so never moved. Costs, all cached: the account's collections are
listed once per process (names and friendly names resolved once; listed again only for a name not found, at most
once per cache period); the collection of a scanned output is read once per cache period (one lookup per type of the
outputs not cached and per URL-sized chunk). In steady state placement adds no call.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Protocol

from olparser.adapters.catalog.errors import CatalogRejected
from olparser.adapters.catalog.retry import RetryPolicy
from olparser.adapters.catalog.rules import read_active, retry_for
from olparser.catalog_rules import REQUEST
from olparser.lineage.placement import PlacementFacts, PlacementRule, load_rules, matching_rule, run_facts
from olparser.settings import Settings

log = logging.getLogger(__name__)
ROLE = "Data Curator"
NO_COLLECTION_CODE = "OL2PURVIEW-NO-COLLECTION"
NOT_ALLOWED_CODE = "OL2PURVIEW-COLLECTION-NOT-ALLOWED"


class CollectionsClient(Protocol):
    endpoint_url: str

    def collections(self) -> list[dict[str, Any]]: ...
    def find_entities(self, type_name: str, qualified_names: list[str]) -> list[dict[str, Any]]: ...
    def find_entities_with_relationships(self, type_name: str, qualified_names: list[str]) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class Collection:
    """Where a run goes: the collection's name (its id), its friendly name, and why (for logs and errors)."""

    name: str
    friendly_name: str
    reason: str

    def describe(self) -> str:
        shown = self.name if self.friendly_name in ("", self.name) else f"{self.name} ({self.friendly_name})"
        return f"collection {shown}, {self.reason}"


class CollectionPlacement:
    """The collection of each run (one per process; thread-safe enough: caches are replaced whole)."""

    def __init__(
        self,
        client: CollectionsClient,
        rules: Iterable[PlacementRule] = (),
        default: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        cache_seconds: float = 600.0,
        max_entries: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self.rules = tuple(rules)
        self.default = default
        self._retry = retry or retry_for()
        self._cache_seconds = cache_seconds
        self._max_entries = max_entries
        self._clock = clock
        self._collections: dict[str, dict[str, Any]] | None = None
        self._listed_at = float("-inf")
        self._scanned: OrderedDict[tuple[str, str], tuple[str | None, float]] = OrderedDict()

    # --- the decision --------------------------------------------------------------------------------------------
    def collection_for(
        self,
        entities: Iterable[dict[str, Any]],
        owned: Iterable[tuple[str, str]],
        is_process: Callable[[dict[str, Any]], bool],
        calls: list[int],
    ) -> Collection | None:
        """The collection of a run whose plan has these entities (`owned`: the keys the connector writes); None for
        the root (no collectionId is sent: new entities land in the root, existing ones stay)."""
        facts = run_facts(entities, is_process)
        rule = matching_rule(self.rules, facts)
        if rule is not None:
            return self._resolve(rule.collection, f"placement rule {rule.describe()}", calls)
        scanned = self._scanned_output_collection(facts, set(owned), calls)
        if scanned is not None:
            return scanned
        if self.default:
            return self._resolve(self.default, "PURVIEW_COLLECTION", calls)
        return None

    def _scanned_output_collection(
        self, facts: PlacementFacts, owned: set[tuple[str, str]], calls: list[int]
    ) -> Collection | None:
        outputs = [key for key in facts.outputs if key not in owned]
        if not outputs:
            return None
        now = self._clock()
        missing = [
            key for key in outputs if key not in self._scanned or now - self._scanned[key][1] > self._cache_seconds
        ]
        found = read_active(self._client, missing, self._retry, calls, what="scanned collection")
        for key in sorted(dict.fromkeys(missing), key=lambda key: key[0]):  # the answers by type, as read
            self._remember(key, (found.get(key) or {}).get("collectionId"), now)
        for key in outputs:
            collection = self._scanned[key][0] if key in self._scanned else None
            if collection:
                info = (self._collections or {}).get(collection) or {}
                return Collection(
                    collection,
                    str(info.get("friendlyName") or collection),
                    f"the collection of the scanned output {key[0]} {key[1]}",
                )
        return None

    def _remember(self, key: tuple[str, str], collection: str | None, now: float) -> None:
        self._scanned[key] = (collection, now)
        self._scanned.move_to_end(key)
        while len(self._scanned) > self._max_entries:
            self._scanned.popitem(last=False)

    # --- names and friendly names ------------------------------------------------------------------------------
    def _resolve(self, wanted: str, reason: str, calls: list[int]) -> Collection:
        found = self._find(wanted)
        if found is None and self._clock() - self._listed_at > self._cache_seconds:
            self._list(calls)
            found = self._find(wanted)
        if found is None:
            names = sorted(self._collections or {})
            raise CatalogRejected(
                404,
                NO_COLLECTION_CODE,
                f"no collection named {wanted!r} (by name or friendly name) in the account, for "
                f"{reason}; the account has {', '.join(names[:20]) or 'none'}",
            )
        if isinstance(found, list):
            raise CatalogRejected(
                409,
                NO_COLLECTION_CODE,
                f"the friendly name {wanted!r} ({reason}) names several collections: "
                f"{', '.join(found)}; use the collection's name",
            )
        return Collection(found, str((self._collections or {})[found].get("friendlyName") or found), reason)

    def _find(self, wanted: str) -> str | list[str] | None:
        if self._collections is None:
            return None
        if wanted in self._collections:
            return wanted
        friendly = sorted(
            n for n, c in self._collections.items() if str(c.get("friendlyName", "")).casefold() == wanted.casefold()
        )
        return friendly[0] if len(friendly) == 1 else (friendly or None)

    def _list(self, calls: list[int]) -> None:
        listed = self._retry.run("list collections", self._client.collections, calls)
        self._collections = {c["name"]: c for c in listed if isinstance(c, dict) and isinstance(c.get("name"), str)}
        self._listed_at = self._clock()


def not_allowed(error: CatalogRejected, collection: Collection) -> CatalogRejected:
    """The 403 of a write into `collection`, saying which collection and which role to grant (first: log lines
    may be cut)."""
    shown = (
        collection.name
        if collection.friendly_name in ("", collection.name)
        else f"{collection.name} ({collection.friendly_name})"
    )
    return CatalogRejected(
        403,
        NOT_ALLOWED_CODE,
        f"grant the connector's identity the {ROLE} role on collection {shown}, then requeue "
        f"(ol2purview requeue); placed there by {collection.reason}; Purview said: "
        f"{error.error_code or '-'}: {error.message}",
    )


def placement_from_settings(client: CollectionsClient, settings: Settings) -> CollectionPlacement | None:
    """The placement of the live and Spark paths alike: on when PLACEMENT_RULES_PATH or PURVIEW_COLLECTION is set
    (None: no collectionId, the root). The rules are read and checked here (ValueError naming every problem)."""
    if settings.placement_rules_path is None and not settings.purview_collection:
        return None
    return CollectionPlacement(
        client,
        load_rules(settings.placement_rules_path),
        settings.purview_collection,
        retry=retry_for(REQUEST, settings),
        cache_seconds=settings.catalog_cache_seconds,
        max_entries=settings.catalog_cache_entries,
    )
