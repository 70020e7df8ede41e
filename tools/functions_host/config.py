"""The parts of host.json the local host honours."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ROUTE_PREFIX = "api"
MAX_REQUEST_BYTES = 100 * 1024 * 1024  # the Azure HTTP front end's request size limit


@dataclass(frozen=True)
class HostConfig:
    """`extensions.http` settings: route prefix and the concurrency limits."""

    route_prefix: str = DEFAULT_ROUTE_PREFIX
    max_concurrent_requests: int = 100  # executions in parallel; the rest wait
    max_outstanding_requests: int = 200  # in flight (running + waiting); beyond that: 429

    @classmethod
    def load(cls, path: Path) -> "HostConfig":
        """Read host.json; a missing file means the defaults. A malformed file raises with its path in the message."""
        if not path.is_file():
            return cls()
        try:
            http = json.loads(path.read_text(encoding="utf-8")).get("extensions", {}).get("http", {})
        except (ValueError, AttributeError) as exc:
            raise ValueError(f"{path}: not a valid host.json ({exc})") from exc
        return cls(
            route_prefix=str(http.get("routePrefix", DEFAULT_ROUTE_PREFIX)),
            max_concurrent_requests=_limit(http.get("maxConcurrentRequests"), cls.max_concurrent_requests),
            max_outstanding_requests=_limit(http.get("maxOutstandingRequests"), cls.max_outstanding_requests),
        )


def _limit(value: object, default: int) -> int:
    """host.json uses -1 for "unbounded"; map it (and absence) to a large or default positive number."""
    if value is None:
        return default
    # Why the type error is ignored: host.json's value: a number or numeric text (int() raises otherwise)
    number = int(value)  # type: ignore[call-overload]
    return 1_000_000 if number < 0 else number
