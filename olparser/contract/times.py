"""Event times the connector can trust: an eventTime later than the moment the request was received plus
MAX_EVENT_TIME_SKEW_SECONDS is clamped to that moment, with a warning.

Why clamp rather than refuse: the worker orders a run's events and a job's runs by eventTime, so a forged date
(`9999-12-31`) would otherwise outrank every later real run of the job for ever. Clamping caps what such a date
buys to the skew window, exactly as a refusal would, and keeps the lineage of producers whose clocks are merely off
(or that send local time without an offset, as openlineage-python's examples do): Spark drops an event that is
refused and never retries it. The clamped event keeps its relative order, since intake sees a producer's events in
the order it sends them. Times in the past are left alone: an old time never outranks a newer run.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

from olparser.contract.limits import SETTING_NAMES

_DATE_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:[Zz]|([+-])(\d{2}):?(\d{2}))?\Z", re.ASCII
)


def event_instant(text: str) -> float | None:
    """An RFC 3339 eventTime (as the contract accepts it) as Unix seconds; no offset means UTC. None when it does not
    parse (the contract has refused such events already). Seconds, not a datetime, so that any offset on any date
    the contract accepts (0001 to 9999) can be applied without overflowing."""
    if is_spark_form(text):
        try:
            return datetime.fromisoformat(text).timestamp()
        except ValueError:  # a leap second (:60), which the general reading takes as :59
            pass
    return instant_by_pattern(text)


def instant_by_pattern(text: str) -> float | None:
    """`event_instant` read with the contract's pattern, whatever the form."""
    match = _DATE_TIME.match(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, sign, off_h, off_m = match.groups()
    micro = int((fraction[1:] + "000000")[:6]) if fraction else 0
    try:
        moment = datetime(
            int(year), int(month), int(day), int(hour), int(minute), min(int(second), 59), micro, tzinfo=timezone.utc
        )
    except ValueError:
        return None
    offset = 0 if sign is None else (int(off_h) * 3600 + int(off_m) * 60) * (1 if sign == "+" else -1)
    return moment.timestamp() - offset


def is_spark_form(text: str) -> bool:
    """True for the shape Spark and most producers write (`2024-05-01T12:00:00.000Z`: UTC, milliseconds), which
    datetime.fromisoformat reads exactly as the general reading does when it reads it at all (the digits are
    checked there)."""
    return (
        len(text) == 24
        and text[10] == "T"
        and text[19] == "."
        and text[23] == "Z"
        and text[4] == "-"
        and text.isascii()
    )


def format_event_time(moment: datetime) -> str:
    """UTC with milliseconds and a Z, as Spark writes eventTime: `2024-05-01T12:00:00.000Z`."""
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def clamp_event_time(event: dict[str, Any], received_at: datetime, skew_seconds: int, prefix: str = "$") -> str | None:
    """Clamp `event["eventTime"]` in place when it is later than `received_at` + `skew_seconds`; return the warning
    to give the producer, or None when the time was kept."""
    text = event.get("eventTime")
    if not isinstance(text, str):
        return None
    moment = event_instant(text)
    latest = received_at.astimezone(timezone.utc) + timedelta(seconds=skew_seconds)
    if moment is None or moment <= latest.timestamp():
        return None
    clamped = format_event_time(latest)
    event["eventTime"] = clamped
    setting = SETTING_NAMES["max_event_time_skew_seconds"]
    return (
        f"{prefix}.eventTime {text[:40]!r} is more than {skew_seconds:,} seconds ahead of the time it was "
        f"received (setting {setting}): recorded as {clamped}"
    )
