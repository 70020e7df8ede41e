"""The catalog rules that call the catalog, each written once (the pure ones are in olparser/catalog_rules.py):

- `read_active`: the ACTIVE entities among some (typeName, qualifiedName) keys, one GET per type and URL-sized chunk
  (`existence.lookup_batches`), for the uploader, the resolver and the placement alike;
- `retry_for`: the RetryPolicy of a kind of catalog call, from the one table of attempts and waits
  (`catalog_rules.RETRIES`; `CATALOG_MAX_ATTEMPTS` sets a request's attempts).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from typing import Any, Iterable, Protocol

from olparser.adapters.catalog.existence import SAFE_URL_LENGTH, DatasetKey, lookup_batches
from olparser.adapters.catalog.retry import RetryPolicy
from olparser.catalog_rules import REQUEST, RETRIES


class LookupClient(Protocol):
    """The catalog client's bulk lookups by unique attribute (AtlasCatalogClient: one request per call)."""

    endpoint_url: str

    def find_entities(self, type_name: str, qualified_names: list[str]) -> list[dict[str, Any]]: ...
    def find_entities_with_relationships(self, type_name: str, qualified_names: list[str]) -> list[dict[str, Any]]: ...


def read_active(
    client: LookupClient,
    keys: Iterable[DatasetKey],
    retry: RetryPolicy,
    calls: list[int],
    *,
    relationships: bool = False,
    what: str = "lookup",
    max_url_length: int = SAFE_URL_LENGTH,
) -> dict[DatasetKey, dict[str, Any]]:
    """The ACTIVE entities among `keys`, by key: one `GET entity/bulk/uniqueAttribute/type/{type}` per type (types
    in the order of their names, each type's names in the order given, duplicates once) and URL-sized chunk, each
    retried by `retry` (`what` names it in logs). An entity the catalog answers with another name, or deleted, is
    not found. `relationships`: with their relationship attributes (a dataset's `columns`, its processes)."""
    by_type: dict[str, list[str]] = defaultdict(list)
    for type_name, qualified_name in dict.fromkeys(keys):
        by_type[type_name].append(qualified_name)
    read = client.find_entities_with_relationships if relationships else client.find_entities
    found: dict[DatasetKey, dict[str, Any]] = {}
    for type_name, names in sorted(by_type.items()):
        for chunk in lookup_batches(client.endpoint_url, type_name, names, max_url_length):
            wanted = set(chunk)
            for entity in retry.run(what, functools.partial(read, type_name, chunk), calls):
                name = (entity.get("attributes") or {}).get("qualifiedName")
                if entity.get("status", "ACTIVE") == "ACTIVE" and name in wanted:
                    found[(type_name, name)] = entity
    return found


def retry_for(kind: str = REQUEST, settings: Any = None, **injected: Any) -> RetryPolicy:
    """The RetryPolicy of a kind of catalog call (`catalog_rules.RETRIES`); with `settings`, a request's attempts are
    CATALOG_MAX_ATTEMPTS. `injected`: what a caller or a test sets itself (sleep, clock, rng, or a limit it was
    given explicitly)."""
    rule = RETRIES[kind]
    limits: dict[str, Any] = {
        "max_attempts": settings.catalog_max_attempts if settings is not None and kind == REQUEST else rule.attempts,
        "max_total_seconds": rule.total_seconds,
        "initial_wait": rule.first_wait,
        "max_wait": rule.max_wait,
    }
    return RetryPolicy(**{**limits, **injected})
