"""A counter of Atlas API calls by route (method + route template), so that "catalog calls per event" can be measured."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any


class CallCounter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()

    def record(self, route: str) -> None:
        with self._lock:
            self._counts[route] += 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {"total": sum(self._counts.values()), "byRoute": dict(sorted(self._counts.items()))}

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()
