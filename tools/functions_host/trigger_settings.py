"""The queue trigger's settings, read from host.json `extensions.queues` with the Functions host's defaults."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

_TIMESPAN = re.compile(r"^(?:(\d+)\.)?(\d{1,2}):(\d{1,2}):(\d{1,2}(?:\.\d+)?)$")


@dataclass(frozen=True)
class QueueTriggerSettings:
    """Seconds for every duration. Defaults are the host's (Functions runtime 4.x, one vCPU)."""

    batch_size: int = 16  # messages fetched per receive (1-32)
    new_batch_threshold: int = 8  # fetch another batch when in-flight messages drop to this (default batchSize/2)
    max_dequeue_count: int = 5  # failed attempts before the message moves to "<queue>-poison"
    visibility_timeout: float = 0.0  # delay before a failed message is retried
    max_polling_interval: float = 60.0  # longest wait between polls of an empty queue
    message_encoding: str = "base64"

    @property
    def max_concurrency(self) -> int:
        """Messages handled in parallel at most (the host's batchSize + newBatchThreshold)."""
        return self.batch_size + self.new_batch_threshold


def parse_timespan(value: Any) -> float:
    """A host.json duration in seconds: "[d.]hh:mm:ss[.fff]", or a bare number of milliseconds (the v1 form)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return value / 1000.0
    match = _TIMESPAN.match(value.strip()) if isinstance(value, str) else None
    if not match:
        raise ValueError(f"invalid duration {value!r}: expected 'hh:mm:ss' (or milliseconds)")
    days, hours, minutes, seconds = match.groups()
    return int(days or 0) * 86400 + int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def queue_trigger_settings(host_json: Mapping[str, Any]) -> QueueTriggerSettings:
    """Settings from a parsed host.json document; missing keys take the host's defaults."""
    queues = (host_json.get("extensions") or {}).get("queues") or {}
    d = QueueTriggerSettings()
    batch_size = _int(queues, "batchSize", d.batch_size, 1, 32)
    encoding = str(queues.get("messageEncoding", d.message_encoding)).lower()
    if encoding not in ("base64", "none"):
        raise ValueError(f"host.json extensions.queues.messageEncoding must be 'base64' or 'none', got {encoding!r}")
    return QueueTriggerSettings(
        batch_size=batch_size,
        new_batch_threshold=_int(queues, "newBatchThreshold", batch_size // 2, 0, 10_000),
        max_dequeue_count=_int(queues, "maxDequeueCount", d.max_dequeue_count, 1, 10_000),
        visibility_timeout=_duration(queues, "visibilityTimeout", d.visibility_timeout),
        max_polling_interval=max(0.1, _duration(queues, "maxPollingInterval", d.max_polling_interval)),
        message_encoding=encoding,
    )


def load_queue_trigger_settings(host_json_path: Path) -> QueueTriggerSettings:
    """Settings from a host.json file."""
    return queue_trigger_settings(json.loads(Path(host_json_path).read_text(encoding="utf-8")))


def _int(queues: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = queues.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"host.json extensions.queues.{key} must be an integer from {low} to {high}, got {value!r}")
    return value


def _duration(queues: Mapping[str, Any], key: str, default: float) -> float:
    if key not in queues:
        return default
    try:
        return parse_timespan(queues[key])
    except ValueError as exc:
        raise ValueError(f"host.json extensions.queues.{key}: {exc}") from None
