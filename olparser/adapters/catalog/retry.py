"""Retries for catalog calls: exponential backoff with jitter, Retry-After honoured, bounded attempts and time.

Built on tenacity. What is retried: 408, 429, 5xx, connection errors, timeouts and token failures. Any other 4xx
fails at once.
Clock, sleep and randomness are injected so that tests can record every wait without sleeping.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Callable, Mapping, TypeVar

import requests
from azure.core.exceptions import ClientAuthenticationError
from pyapacheatlas.core.util import AtlasException
from tenacity import RetryCallState, Retrying, retry_if_exception

from olparser.adapters.catalog.errors import CatalogHttpError, CatalogRejected, CatalogUnavailable, from_atlas_exception
from olparser.catalog_rules import REQUEST, RETRIES

log = logging.getLogger(__name__)
T = TypeVar("T")


def retry_after_seconds(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds to wait from `retry-after-ms` / `x-ms-retry-after-ms` (Azure) or `Retry-After` (seconds or HTTP-date).

    `now` is the wall-clock time (epoch seconds) the response arrived. None when absent or unreadable.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    for name in ("retry-after-ms", "x-ms-retry-after-ms"):
        try:
            return max(0.0, float(lowered[name]) / 1000.0)
        except (KeyError, ValueError):
            pass
    value = (lowered.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)


_UNREACHABLE = (requests.ConnectionError, requests.Timeout, ClientAuthenticationError)


def is_transient(exc: BaseException) -> bool:
    """True for failures that a later attempt may not see: 408, 429, 5xx, connection errors, timeouts, and
    failing to get a token (the managed-identity endpoint throttles and hiccups too)."""
    if isinstance(exc, CatalogHttpError):
        return exc.is_transient
    return isinstance(exc, _UNREACHABLE)


@dataclass
class RetryPolicy:
    """How often and how long to retry one catalog call: bounded attempts, bounded total time, capped waits."""

    # the defaults: a catalog request's (olparser/catalog_rules.py RETRIES, built by rules.retry_for)
    max_attempts: int = RETRIES[REQUEST].attempts
    max_total_seconds: float = RETRIES[REQUEST].total_seconds  # budget for one call, waits included
    initial_wait: float = RETRIES[REQUEST].first_wait  # first backoff, doubled after every failure
    max_wait: float = RETRIES[REQUEST].max_wait  # cap on one wait, Retry-After included
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    rng: random.Random = field(default_factory=random.Random)

    def backoff(self, attempt: int, exc: BaseException | None) -> float:
        """Wait before the attempt after `attempt` (1-based): Retry-After if the catalog sent one, else
        half of the exponential delay plus a random part of the other half (equal jitter). Capped at max_wait."""
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
            return min(float(retry_after), self.max_wait)
        delay: float = min(self.max_wait, self.initial_wait * 2 ** (attempt - 1))
        return delay / 2 + self.rng.uniform(0.0, delay / 2)

    def run(self, what: str, operation: Callable[[], T], counter: list[int] | None = None) -> T:
        """Call `operation` until it succeeds, fails for good (CatalogRejected) or retries run out
        (CatalogUnavailable). `what` names the call in logs and errors; `counter[0]` is incremented per attempt."""
        started = self.clock()

        def attempt() -> T:
            if counter is not None:
                counter[0] += 1
            try:
                return operation()
            except AtlasException as exc:  # a BaseException: translated here and nowhere else
                raise from_atlas_exception(exc) from None

        def wait(state: RetryCallState) -> float:
            return self.backoff(state.attempt_number, state.outcome.exception() if state.outcome else None)

        def stop(state: RetryCallState) -> bool:
            spent = self.clock() - started + state.upcoming_sleep
            return state.attempt_number >= self.max_attempts or spent >= self.max_total_seconds

        def before_sleep(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            log.warning(
                "catalog %s failed (%s), attempt %d of %d, retrying in %.2fs",
                what,
                _describe(exc),
                state.attempt_number,
                self.max_attempts,
                state.upcoming_sleep,
            )

        retrying = Retrying(
            stop=stop,
            wait=wait,
            retry=retry_if_exception(is_transient),
            sleep=self.sleep,
            before_sleep=before_sleep,
            reraise=True,
        )
        try:
            return retrying(attempt)
        except CatalogHttpError as exc:
            if not exc.is_transient:
                raise CatalogRejected(exc.status, exc.error_code, exc.message) from None
            attempts = retrying.statistics.get("attempt_number", 0)
            raise CatalogUnavailable(
                f"catalog {what} kept failing after {attempts} attempts: {_describe(exc)}",
                status=exc.status,
                retry_after=exc.retry_after,
                attempts=attempts,
            ) from exc
        except _UNREACHABLE as exc:
            attempts = retrying.statistics.get("attempt_number", 0)
            raise CatalogUnavailable(
                f"catalog {what} unreachable after {attempts} attempts: {_describe(exc)}", attempts=attempts
            ) from exc


def _describe(exc: BaseException | None) -> str:
    if isinstance(exc, CatalogHttpError):
        return f"{exc.status} {exc.error_code or ''}".strip()
    return type(exc).__name__ if exc is not None else "unknown"
