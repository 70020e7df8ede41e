"""Writing one run's LineagePlan to the catalog in as few calls as possible, and deleting what no run uses.

1. External datasets not known from the cache are looked up, one GET per type (split only to keep URLs short).
   Existing ones are referenced, never rewritten (a scanner owns their attributes); missing ones are created.
2. Everything to write goes in one `POST /entity/bulk` (several only above `bulk_size`, see batching.py).
A run over new datasets costs 2 calls, over cached ones 1. Every call is retried by the RetryPolicy.

`delete(keys)` removes connector-owned entities by (typeName, qualifiedName): one GET per type for their guids (and
the columns of a placeholder dataset), then one `DELETE /entity/bulk` (split only to keep URLs short). An entity of a
type that is not the connector's own (an interim dataset it created for want of a scanned asset) is kept when an
active process still reads or writes it (another tool's lineage) or when a scan has filled it in since (it is the
scanner's now, `resolver.taken_over`).
"""

from __future__ import annotations

import functools
import logging
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Protocol

from olparser.adapters.catalog.batching import bulk_batches, entity_key, placeholder_keys
from olparser.adapters.catalog.errors import CatalogRejected
from olparser.adapters.catalog.existence import SAFE_URL_LENGTH, DatasetKey, ExistenceCache, guid_batches, taken_over
from olparser.adapters.catalog.placement import Collection, CollectionPlacement, not_allowed
from olparser.adapters.catalog.retry import RetryPolicy
from olparser.adapters.catalog.rules import read_active, retry_for
from olparser.adapters.catalog.typedefs import TypedefReport, register_typedefs
from olparser.catalog_rules import REQUEST, related, used_by
from olparser.lineage.accelerator import PLACEHOLDER_TYPE as ACCELERATOR_PLACEHOLDER
from olparser.lineage.plan import DeleteReport, UploadReport, is_process
from olparser.settings import Settings

if TYPE_CHECKING:  # only a type here: importing olparser.lineage would load the whole entity builder
    from olparser.lineage.plan import LineagePlan

log = logging.getLogger(__name__)
_REFERENCE_NOT_FOUND = "ATLAS-404-00-00A"


class CatalogClient(Protocol):
    """What the uploader needs from a client (AtlasCatalogClient provides it, one HTTP request per method)."""

    endpoint_url: str

    def find_entities(self, type_name: str, qualified_names: list[str]) -> list[dict[str, Any]]: ...
    def find_entities_with_relationships(self, type_name: str, qualified_names: list[str]) -> list[dict[str, Any]]: ...
    def entities_by_guid(self, guids: list[str]) -> list[dict[str, Any]]: ...
    def delete_guids(self, guids: list[str]) -> dict[str, Any]: ...
    def upload_bulk(self, entities: list[dict[str, Any]], collection_id: str | None = None) -> dict[str, Any]: ...
    def typedef_headers(self) -> list[dict[str, Any]]: ...
    def typedefs(self) -> dict[str, Any]: ...
    def create_typedefs(self, typedefs: dict[str, Any]) -> dict[str, Any]: ...
    def update_typedefs(self, typedefs: dict[str, Any]) -> dict[str, Any]: ...


# Types no scanner writes, whose attributes never mean a scan took the entity over: the accelerator's placeholders
# (their `data_type` and `description` are the accelerator's), which `migrate accelerator` takes over
NEVER_SCANNED = frozenset({ACCELERATOR_PLACEHOLDER})
# Purview's Databricks model: what holds other entities (composition containers: deleting one deletes what it holds)
CONTAINER_ATTRIBUTES = ("processes", "notebooks", "jobs", "job_tasks", "pipelines")


def _holding(found: Mapping[DatasetKey, Mapping[str, Any]]) -> set[DatasetKey]:
    """Of the entities to delete, those that still hold an active entity that is not deleted with them (a notebook
    with a process another run or tool still has, a job with another task): kept, since deleting a container deletes
    what it holds. Decided over the whole set, so a workspace whose notebooks all go goes too."""
    going = {e.get("guid") for e in found.values()}
    members = {
        key: {item.get("guid") for item in related(entity, CONTAINER_ATTRIBUTES)} for key, entity in found.items()
    }
    kept: set[DatasetKey] = set()
    while True:
        held = {key for key, guids in members.items() if key not in kept and guids - going}
        if not held:
            return kept
        kept |= held
        going -= {found[key].get("guid") for key in held}


class CatalogUploader:
    """Uploads LineagePlans through a catalog client; keeps the existence cache between runs (one per process)."""

    def __init__(
        self,
        client: CatalogClient,
        *,
        settings: Settings | None = None,
        bulk_size: int | None = None,
        cache_seconds: float | None = None,
        max_attempts: int | None = None,
        max_total_seconds: float | None = None,
        max_url_length: int = SAFE_URL_LENGTH,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        retry_policy: RetryPolicy | None = None,
        cache: ExistenceCache | None = None,
        connector_types: frozenset[str] | None = None,
        placement: CollectionPlacement | None = None,
    ) -> None:
        settings = settings or Settings()
        self._client = client
        self._placement = placement  # the collection of each run's entities (None: no collectionId, the root)
        self._bulk_size = bulk_size if bulk_size is not None else settings.catalog_bulk_size
        self._max_url_length = max_url_length
        self._cache = (
            cache
            if cache is not None
            else ExistenceCache(
                cache_seconds if cache_seconds is not None else settings.catalog_cache_seconds, clock=clock
            )
        )
        self._connector_types = connector_types
        limits = {"max_attempts": max_attempts, "max_total_seconds": max_total_seconds}  # given here, else the rule's
        self._retry = retry_policy or retry_for(
            REQUEST, settings, sleep=sleep, clock=clock, **{k: v for k, v in limits.items() if v is not None}
        )

    @property
    def cache(self) -> ExistenceCache:
        return self._cache

    @property
    def retry(self) -> RetryPolicy:
        return self._retry

    def upload(self, plan: LineagePlan, *, refresh: bool = True) -> UploadReport:
        """Write the plan. Raises CatalogUnavailable (retry later) or CatalogRejected (never succeeds).

        If a dataset the cache vouched for has vanished (the bulk answers 404 ATLAS-404-00-00A), the cached
        entries are dropped and the run is written once more from fresh lookups (`refresh=False`: the 404 is raised,
        for a caller that resolves the plan again itself).
        """
        calls = [0]
        external, duplicates = _unique_by_key(plan.external_datasets)
        collection = (
            self._placement.collection_for(plan.entities, plan.owned_keys(), is_process, calls)
            if self._placement is not None
            else None
        )
        if collection is not None:
            log.info("placing the run in %s", collection.describe())
        try:
            try:
                report = self._upload(plan, external, duplicates, calls, use_cache=True, collection=collection)
            except CatalogRejected as exc:
                if exc.error_code != _REFERENCE_NOT_FOUND or not self._cache.known(external) or not refresh:
                    raise
                log.warning("a cached dataset is gone from the catalog; writing the run again from fresh lookups")
                self._cache.forget(external)
                report = self._upload(plan, external, duplicates, calls, use_cache=False, collection=collection)
        except CatalogRejected as exc:
            if exc.status == 403 and collection is not None:
                raise not_allowed(exc, collection) from None
            raise
        sent = [key for entity in plan.entities if (key := entity_key(entity)) is not None] + [
            k for k in external if k not in report.referenced
        ]
        log.info("uploaded %s, %d calls", report.counts(sent), report.calls)
        return report

    def delete(self, keys: Iterable[DatasetKey], *, in_use: bool = False) -> DeleteReport:
        """Delete these entities (and the columns of those that have `columns`), if they exist and are active.
        Raises CatalogUnavailable or CatalogRejected as `upload` does; deleting what is already gone is not an error.
        `in_use`: delete them even while processes use them (the caller checked those are the connector's: a table
        dropped); what a scan filled in still stays."""
        calls = [0]
        found = read_active(
            self._client, keys, self._retry, calls, relationships=True, max_url_length=self._max_url_length
        )
        guids: list[str] = []
        deleted: list[DatasetKey] = []
        holding = _holding(found)
        going = {e.get("guid") for key, e in found.items() if key not in holding}
        for key, entity in found.items():
            if key in holding or self._keep(key, entity, in_use=in_use, going=going):
                continue
            deleted.append(key)
            guids.append(entity["guid"])
            columns = (entity.get("relationshipAttributes") or {}).get("columns") or []
            guids += [
                c["guid"]
                for c in columns
                if isinstance(c, dict)
                and isinstance(c.get("guid"), str)
                and c.get("entityStatus", "ACTIVE") == "ACTIVE"
            ]
        unique = list(dict.fromkeys(guids))
        for chunk in guid_batches(self._client.endpoint_url, unique, self._max_url_length):
            self._retry.run("bulk delete", functools.partial(self._client.delete_guids, chunk), calls)
        self._cache.forget(deleted)
        if deleted:
            log.info(
                "deleted %d entities no run uses any more (%d with columns), %d calls",
                len(deleted),
                len(unique),
                calls[0],
            )
        return DeleteReport(
            calls=calls[0],
            deleted=tuple(deleted),
            entities=len(unique),
            kept=tuple(key for key in found if key not in set(deleted)),
        )

    def read(self, keys: Iterable[DatasetKey], calls: list[int]) -> dict[DatasetKey, dict[str, Any]]:
        """The ACTIVE entities among `keys`, with their relationship attributes: one GET per type (and URL-sized
        chunk)."""
        return read_active(
            self._client, keys, self._retry, calls, relationships=True, max_url_length=self._max_url_length
        )

    def write_entities(self, entities: list[dict[str, Any]], calls: list[int]) -> dict[str, Any]:
        """One bulk write of these entities as they are (a partial update of entities the catalog holds: what is
        left out stays), retried like every call."""
        if not entities:
            return {}
        return self._retry.run("bulk write", functools.partial(self._client.upload_bulk, entities), calls) or {}

    def read_guids(self, guids: Iterable[str], calls: list[int]) -> list[dict[str, Any]]:
        """The ACTIVE entities with these guids, with their relationship attributes (URL-sized chunks)."""
        found: list[dict[str, Any]] = []
        for chunk in guid_batches(self._client.endpoint_url, list(dict.fromkeys(guids)), self._max_url_length):
            found += [
                e
                for e in self._retry.run("read by guid", functools.partial(self._client.entities_by_guid, chunk), calls)
                if e.get("status", "ACTIVE") == "ACTIVE"
            ]
        return found

    def _keep(
        self, key: DatasetKey, entity: dict[str, Any], *, in_use: bool = False, going: set[Any] | None = None
    ) -> bool:
        """An entity of a type that is not the connector's own stays when another process still uses it (unless
        `in_use`; a process deleted in the same call does not count: `going`) or a scan has filled it in (see the
        module docstring)."""
        if self._connector_types is None or key[0] in self._connector_types:
            return False
        used = not in_use and any(item.get("guid") not in (going or ()) for item in used_by(entity))
        if used or (key[0] not in NEVER_SCANNED and taken_over(entity)):
            log.info("kept %s: %s", key[0], "another process still uses it" if used else "a scan has registered it")
            return True
        return False

    def register_typedefs(self, typedef_json: dict[str, Any]) -> TypedefReport:
        """Create the missing types and update the existing ones (at most 3 calls); safe to repeat."""
        return register_typedefs(self._client, typedef_json, self._retry)

    def _upload(
        self,
        plan: LineagePlan,
        external: dict[DatasetKey, dict[str, Any]],
        duplicates: dict[str, DatasetKey],
        calls: list[int],
        *,
        use_cache: bool,
        collection: Collection | None = None,
    ) -> UploadReport:
        existing = self._existing(list(external), calls, use_cache)
        entities = [entity for key, entity in external.items() if key not in existing] + list(plan.entities)
        not_sent = {guid: key for guid, key in placeholder_keys(list(external.values())).items() if key in existing}
        not_sent |= {guid: key for guid, key in duplicates.items() if key in existing}
        aliases = {
            guid: external[key]["guid"]
            for guid, key in duplicates.items()
            if key not in existing and isinstance(external[key].get("guid"), str)
        }

        created: list[DatasetKey] = []
        updated: list[DatasetKey] = []
        assignments: dict[str, str] = {}
        names = placeholder_keys(entities)
        for batch in bulk_batches(entities, self._bulk_size, not_sent, aliases):
            result = self._retry.run(
                "bulk upsert",
                functools.partial(self._client.upload_bulk, batch)
                if collection is None
                else functools.partial(self._client.upload_bulk, batch, collection.name),
                calls,
            )
            batch_assignments = dict(result.get("guidAssignments") or {})
            assignments.update(batch_assignments)
            by_guid = {
                guid: names[placeholder] for placeholder, guid in batch_assignments.items() if placeholder in names
            }
            mutated = result.get("mutatedEntities") or {}
            created += _headers_keys(mutated.get("CREATE"), by_guid)
            updated += _headers_keys((mutated.get("UPDATE") or []) + (mutated.get("PARTIAL_UPDATE") or []), by_guid)
            self._cache.remember(key for key in map(entity_key, batch) if key in external)
        created_once = tuple(dict.fromkeys(created))  # an entity a later batch updates again was still created
        return UploadReport(
            calls=calls[0],
            created=created_once,
            updated=tuple(key for key in dict.fromkeys(updated) if key not in set(created_once)),
            referenced=tuple(key for key in external if key in existing),
            guid_assignments=assignments,
        )

    def _existing(self, keys: list[DatasetKey], calls: list[int], use_cache: bool) -> set[DatasetKey]:
        """Which of `keys` exist: from the cache (positive and negative answers), else one lookup per type (more
        only for very long URLs)."""
        existing = self._cache.known(keys) if use_cache else set()
        absent = self._cache.absent(keys) if use_cache else set()  # just looked up by the resolver: created below
        answered = existing | absent
        missing = [key for key in keys if key not in answered]
        found = read_active(
            self._client, missing, self._retry, calls, what="existence check", max_url_length=self._max_url_length
        )
        existing |= set(found)
        self._cache.remember(found)
        return existing


def _unique_by_key(
    datasets: tuple[dict[str, Any], ...],
) -> tuple[dict[DatasetKey, dict[str, Any]], dict[str, DatasetKey]]:
    """External datasets by (typeName, qualifiedName), the first of each kept, and the placeholders of the
    duplicates dropped. A dataset without typeName and qualifiedName is an error."""
    unique: dict[DatasetKey, dict[str, Any]] = {}
    duplicates: dict[str, DatasetKey] = {}
    for entity in datasets:
        key = entity_key(entity)
        if key is None:
            raise ValueError(f"external dataset without typeName and qualifiedName: guid {entity.get('guid')!r}")
        if key in unique:
            if isinstance(entity.get("guid"), str):
                duplicates[entity["guid"]] = key
        else:
            unique[key] = entity
    return unique, duplicates


def _headers_keys(headers: list[dict[str, Any]] | None, by_guid: dict[str, DatasetKey]) -> list[DatasetKey]:
    """(typeName, qualifiedName) of mutated-entity headers, via the guid assignments when a header has no name."""
    keys = []
    for header in headers or []:
        key = entity_key(header) or by_guid.get(header.get("guid", ""))
        if key is not None:
            keys.append(key)
    return keys
