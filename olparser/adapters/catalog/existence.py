"""What the catalog holds, as far as this process knows: time-limited answers (positive and negative), and URL-safe
lookup batches."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Generic, Hashable, Iterable, TypeVar
from urllib.parse import quote_plus

DatasetKey = tuple[str, str]  # (typeName, qualifiedName)
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

# Well under the 2,048-character limits common in front of HTTP services (gateways, IIS query-string defaults).
SAFE_URL_LENGTH = 2000


# Attributes the connector writes on an external dataset it creates; anything else filled in means a scan (or a
# person) has registered or edited that entity since: it is theirs now.
CONNECTOR_DATASET_ATTRIBUTES = frozenset({"qualifiedName", "name"})


def taken_over(entity: dict[str, Any]) -> bool:
    """True when an entity carries attribute values the connector never writes on a dataset it creates."""
    for name, value in (entity.get("attributes") or {}).items():
        if name in CONNECTOR_DATASET_ATTRIBUTES or value is None or value is False:
            continue
        if value == 0 or value == "" or value == [] or value == {}:
            continue
        return True
    return False


def existence_cache_for(settings: Any) -> "ExistenceCache":
    """The process's existence cache as the settings size it (CATALOG_CACHE_SECONDS, RESOLUTION_NEGATIVE_CACHE_SECONDS,
    CATALOG_CACHE_ENTRIES): one rule for the live path and the backfill."""
    return ExistenceCache(
        settings.catalog_cache_seconds,
        max_entries=settings.catalog_cache_entries,
        absent_ttl_seconds=settings.resolution_negative_cache_seconds,
    )


class TtlMap(Generic[K, V]):
    """Answers that expire: each value for its own number of seconds after it was stored. Thread-safe; bounded in
    size (the least recently stored entries go first)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, max_entries: int = 100_000) -> None:
        self._clock = clock
        self._max_entries = max_entries
        self._entries: dict[K, tuple[float, V]] = {}
        self._lock = threading.Lock()

    def get_many(self, keys: Iterable[K]) -> dict[K, V]:
        """The fresh answers among `keys` (expired entries are dropped)."""
        now = self._clock()
        found: dict[K, V] = {}
        with self._lock:
            for key in keys:
                entry = self._entries.get(key)
                if entry is None:
                    continue
                if entry[0] > now:
                    found[key] = entry[1]
                else:
                    del self._entries[key]
        return found

    def put_many(self, items: Iterable[tuple[K, V]], ttl_seconds: float) -> None:
        if ttl_seconds <= 0:
            return
        expires = self._clock() + ttl_seconds
        with self._lock:
            for key, value in items:
                self._entries.pop(key, None)  # re-insert: the dict stays ordered oldest first
                self._entries[key] = (expires, value)
            while len(self._entries) > self._max_entries:
                del self._entries[next(iter(self._entries))]

    def forget(self, keys: Iterable[K]) -> None:
        with self._lock:
            for key in keys:
                self._entries.pop(key, None)

    def __len__(self) -> int:
        return len(self._entries)


class ExistenceCache:
    """Which entities exist: positive answers for `ttl_seconds`, negative ones (`remember_absent`) for
    `absent_ttl_seconds` (0: not kept). Thread-safe; bounded in size. The resolver and the uploader of a process share
    one, so a dataset looked up once is not looked up again by either."""

    def __init__(
        self,
        ttl_seconds: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_entries: int = 100_000,
        absent_ttl_seconds: float = 0.0,
    ) -> None:
        self._ttl = ttl_seconds
        self._absent_ttl = absent_ttl_seconds
        self._answers: TtlMap[DatasetKey, bool] = TtlMap(clock=clock, max_entries=max_entries)

    @property
    def ttl_seconds(self) -> float:
        return self._ttl

    @property
    def absent_ttl_seconds(self) -> float:
        return self._absent_ttl

    def known(self, keys: Iterable[DatasetKey]) -> set[DatasetKey]:
        """The keys among `keys` still known to exist."""
        return {key for key, present in self._answers.get_many(keys).items() if present}

    def absent(self, keys: Iterable[DatasetKey]) -> set[DatasetKey]:
        """The keys among `keys` still known not to exist."""
        return {key for key, present in self._answers.get_many(keys).items() if not present}

    def remember(self, keys: Iterable[DatasetKey]) -> None:
        self._answers.put_many(((key, True) for key in keys), self._ttl)

    def remember_absent(self, keys: Iterable[DatasetKey]) -> None:
        """These do not exist: remembered as such, or, when negative answers are not kept, no longer known to."""
        if self._absent_ttl > 0:
            self._answers.put_many(((key, False) for key in keys), self._absent_ttl)
        else:
            self._answers.forget(keys)

    def forget(self, keys: Iterable[DatasetKey]) -> None:
        self._answers.forget(keys)

    def __len__(self) -> int:
        return len(self._answers)


def lookup_batches(
    base_url: str, type_name: str, qualified_names: list[str], max_url_length: int = SAFE_URL_LENGTH
) -> list[list[str]]:
    """Split one type's names into lookups whose URL (`{base}/entity/bulk/uniqueAttribute/type/{t}?attr_N:...`,
    plus the fixed flags) stays under `max_url_length`. A name too long on its own still gets its own lookup."""
    fixed = len(
        f"{base_url}/entity/bulk/uniqueAttribute/type/{quote_plus(type_name)}"
        "?api-version=2023-09-01&ignoreRelationships=True&minExtInfo=True"
    )
    return _url_batches(
        fixed,
        qualified_names,
        max_url_length,
        lambda position, name: len(f"&attr_{position}%3AqualifiedName={quote_plus(name)}"),
    )


def guid_batches(base_url: str, guids: list[str], max_url_length: int = SAFE_URL_LENGTH) -> list[list[str]]:
    """Split guids into `{base}/entity/bulk?guid=...&guid=...` requests whose URL stays under `max_url_length`."""
    fixed = len(f"{base_url}/entity/bulk?api-version=2023-09-01")
    return _url_batches(fixed, guids, max_url_length, lambda _position, guid: len(f"&guid={quote_plus(guid)}"))


def _url_batches(
    fixed: int, items: list[str], max_url_length: int, size_of: Callable[[int, str], int]
) -> list[list[str]]:
    """Consecutive runs of `items` whose query parts (`size_of(position in the batch, item)`) fit after `fixed`."""
    batches: list[list[str]] = []
    current: list[str] = []
    length = fixed
    for item in items:
        size = size_of(len(current), item)
        if current and length + size > max_url_length:
            batches.append(current)
            current, length = [], fixed
            size = size_of(0, item)
        current.append(item)
        length += size
    if current:
        batches.append(current)
    return batches
