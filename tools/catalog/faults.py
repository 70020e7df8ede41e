"""Fault injection for the Atlas API: throttling, errors, connection resets, latency, outages.

A spec is a comma-separated list, e.g. `429:0.2,503:0.1,reset:0.05,latency:50ms,retry-after:2,seed:7`:
`<status>:<p>` answers that HTTP status (400-599) with probability p; `reset:<p>` closes the connection without a
response; `latency:<d>` delays every call (`50ms`, `0.2s`, or a number of ms); `retry-after:<s>` is the Retry-After
sent with 429 and 503 (default 1); `seed:<n>` makes the draws reproducible; `down` refuses every call with 503
(`down:reset` closes every connection instead). An empty spec or `none` turns faults off.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class FaultSpec:
    outcomes: tuple[tuple[str, float], ...] = ()  # ("429", 0.2), ("reset", 0.05) ... in spec order
    latency_seconds: float = 0.0
    retry_after_seconds: int = 1
    seed: int | None = None
    down: str | None = None  # None, "503" or "reset"

    def __str__(self) -> str:
        items = [f"{kind}:{p:g}" for kind, p in self.outcomes]
        if self.latency_seconds:
            items.append(f"latency:{self.latency_seconds * 1000:g}ms")
        if self.retry_after_seconds != 1:
            items.append(f"retry-after:{self.retry_after_seconds}")
        if self.seed is not None:
            items.append(f"seed:{self.seed}")
        if self.down:
            items.append("down" if self.down == "503" else "down:reset")
        return ",".join(items)


@dataclass(frozen=True)
class Fault:
    """What to do with one call: wait `latency_seconds`, then answer `status`, reset, or pass through."""

    latency_seconds: float = 0.0
    status: int | None = None
    reset: bool = False
    retry_after_seconds: int = 1


def _duration(text: str) -> float:
    text = text.strip().lower()
    if text.endswith("ms"):
        return float(text[:-2]) / 1000
    if text.endswith("s"):
        return float(text[:-1])
    return float(text) / 1000


def parse_fault_spec(spec: str | None) -> FaultSpec:
    """Parse a spec string; a ValueError names the item that is wrong."""
    outcomes: list[tuple[str, float]] = []
    latency, retry_after, seed, down = 0.0, 1, None, None
    for item in (spec or "").split(","):
        item = item.strip()
        if not item or item.lower() == "none":
            continue
        key, _, value = item.partition(":")
        key = key.strip().lower()
        try:
            if key == "down":
                if value.strip().lower() not in ("", "503", "reset"):
                    raise ValueError
                down = "reset" if value.strip().lower() == "reset" else "503"
            elif key == "latency":
                latency = _duration(value)
                if latency < 0:
                    raise ValueError
            elif key == "retry-after":
                retry_after = int(value)
                if retry_after < 0:
                    raise ValueError
            elif key == "seed":
                seed = int(value)
            elif key == "reset" or (key.isdigit() and 400 <= int(key) <= 599):
                probability = float(value)
                if not 0 <= probability <= 1:
                    raise ValueError
                outcomes.append((key, probability))
            else:
                raise ValueError
        except ValueError:
            raise ValueError(
                f"bad fault spec item '{item}': expected <status 400-599>:<p>, reset:<p>, latency:<ms>, "
                "retry-after:<s>, seed:<n> or down"
            ) from None
    if sum(p for _, p in outcomes) > 1 + 1e-9:
        raise ValueError(f"bad fault spec '{spec}': the probabilities add up to more than 1")
    return FaultSpec(tuple(outcomes), latency, retry_after, seed, down)


class FaultInjector:
    """Draws a Fault per call from the current spec; the spec can be swapped at runtime (thread-safe)."""

    def __init__(self, spec: FaultSpec | None = None) -> None:
        self._lock = threading.Lock()
        self.configure(spec or FaultSpec())

    def configure(self, spec: FaultSpec) -> None:
        with self._lock:
            self.spec = spec
            self._random = random.Random(spec.seed)

    def draw(self) -> Fault:
        with self._lock:
            spec = self.spec
            if spec.down:
                return Fault(
                    spec.latency_seconds,
                    None if spec.down == "reset" else 503,
                    spec.down == "reset",
                    spec.retry_after_seconds,
                )
            if not spec.outcomes:
                return Fault(spec.latency_seconds)
            roll = self._random.random()
        cumulative = 0.0
        for kind, probability in spec.outcomes:
            cumulative += probability
            if roll < cumulative:
                return Fault(
                    spec.latency_seconds,
                    None if kind == "reset" else int(kind),
                    kind == "reset",
                    spec.retry_after_seconds,
                )
        return Fault(spec.latency_seconds)
