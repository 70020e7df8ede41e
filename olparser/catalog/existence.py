"""Which external datasets already exist: a time-limited cache of positive answers, and URL-safe lookup batches."""
from __future__ import annotations

import threading
import time
from typing import Callable, Iterable
from urllib.parse import quote_plus

DatasetKey = tuple[str, str]  # (typeName, qualifiedName)

# Well under the 2,048-character limits common in front of HTTP services (gateways, IIS query-string defaults).
SAFE_URL_LENGTH = 2000


class ExistenceCache:
    """Datasets known to exist, each for `ttl_seconds` after it was last seen. Thread-safe; bounded in size."""

    def __init__(self, ttl_seconds: float, *, clock: Callable[[], float] = time.monotonic,
                 max_entries: int = 100_000) -> None:
        self._ttl = ttl_seconds
        self._clock = clock
        self._max_entries = max_entries
        self._expiry: dict[DatasetKey, float] = {}
        self._lock = threading.Lock()

    def known(self, keys: Iterable[DatasetKey]) -> set[DatasetKey]:
        """The keys among `keys` still known to exist (expired entries are dropped)."""
        now = self._clock()
        found = set()
        with self._lock:
            for key in keys:
                expires = self._expiry.get(key)
                if expires is None:
                    continue
                if expires > now:
                    found.add(key)
                else:
                    del self._expiry[key]
        return found

    def remember(self, keys: Iterable[DatasetKey]) -> None:
        if self._ttl <= 0:
            return
        expires = self._clock() + self._ttl
        with self._lock:
            for key in keys:
                self._expiry.pop(key, None)  # re-insert: the dict stays ordered oldest first
                self._expiry[key] = expires
            while len(self._expiry) > self._max_entries:
                del self._expiry[next(iter(self._expiry))]

    def forget(self, keys: Iterable[DatasetKey]) -> None:
        with self._lock:
            for key in keys:
                self._expiry.pop(key, None)

    def __len__(self) -> int:
        return len(self._expiry)


def lookup_batches(base_url: str, type_name: str, qualified_names: list[str],
                   max_url_length: int = SAFE_URL_LENGTH) -> list[list[str]]:
    """Split one type's names into lookups whose URL (`{base}/entity/bulk/uniqueAttribute/type/{t}?attr_N:...`,
    plus the fixed flags) stays under `max_url_length`. A name too long on its own still gets its own lookup."""
    fixed = len(f"{base_url}/entity/bulk/uniqueAttribute/type/{quote_plus(type_name)}"
                "?api-version=2023-09-01&ignoreRelationships=True&minExtInfo=True")
    return _url_batches(fixed, qualified_names, max_url_length,
                        lambda position, name: len(f"&attr_{position}%3AqualifiedName={quote_plus(name)}"))


def guid_batches(base_url: str, guids: list[str], max_url_length: int = SAFE_URL_LENGTH) -> list[list[str]]:
    """Split guids into `{base}/entity/bulk?guid=...&guid=...` requests whose URL stays under `max_url_length`."""
    fixed = len(f"{base_url}/entity/bulk?api-version=2023-09-01")
    return _url_batches(fixed, guids, max_url_length, lambda _position, guid: len(f"&guid={quote_plus(guid)}"))


def _url_batches(fixed: int, items: list[str], max_url_length: int,
                 size_of: Callable[[int, str], int]) -> list[list[str]]:
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
