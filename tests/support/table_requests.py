"""Counting the requests a Table storage client makes (azure-core's raw_request_hook calls the hook once per request):
bounds on work asserted by counting, for the run-state and the run-history stores."""

from __future__ import annotations

from typing import Any


class RequestCount:
    """The requests a Table client made (azure-core's raw_request_hook calls it once per request)."""

    def __init__(self) -> None:
        self.requests = 0

    def __call__(self, request: Any) -> None:
        self.requests += 1

    def take(self) -> int:
        """The requests made since the last `take()`."""
        taken, self.requests = self.requests, 0
        return taken
