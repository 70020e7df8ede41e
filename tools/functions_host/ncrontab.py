"""NCRONTAB schedules, as Azure Functions timer triggers read them: six fields, seconds first.

    {second} {minute} {hour} {day} {month} {day-of-week}
    "0 */5 * * * *"      every five minutes, on the minute
    "*/10 * 9-17 * * Mon-Fri"

Each field is `*`, a value, a range `a-b`, a step `*/n` or `a-b/n` or `a/n`, or a comma-separated list of those.
Months and days of the week may be written as English names or their first three letters (case-insensitive);
days of the week are 0-6 from Sunday (7 is also Sunday). As in NCrontab (the library the Functions host uses), a
moment matches when every field matches: a restricted day of the month and a restricted day of the week must both
hold. Times are those of the clock the caller passes (the host uses UTC, as Azure does without WEBSITE_TIME_ZONE).
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import datetime, timedelta

MONTH_NAMES = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
DAY_NAMES = {name.lower(): (number + 1) % 7 for number, name in enumerate(calendar.day_name)}  # Monday=1 ... Sunday=0
_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (  # name, lowest, highest, names
    ("second", 0, 59, {}),
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day", 1, 31, {}),
    ("month", 1, 12, MONTH_NAMES),
    ("day-of-week", 0, 7, DAY_NAMES),
)
_SEARCH_YEARS = 8  # a schedule with no occurrence within this many years has none (e.g. 30 February)


class ScheduleError(ValueError):
    """A schedule that is not a valid NCRONTAB expression; the message names the field and the problem."""


def _value(text: str, field: str, low: int, high: int, names: dict[str, int]) -> int:
    word = text.strip().lower()
    named = (
        names.get(word)
        if len(word) < 3
        else next((number for name, number in names.items() if name.startswith(word)), None)
    )
    if named is not None:
        return named
    if not word.isdigit():
        raise ScheduleError(f"{field}: {text!r} is not a number" + (" or a name" if names else ""))
    number = int(word)
    if not low <= number <= high:
        raise ScheduleError(f"{field}: {number} is outside {low}-{high}")
    return number


def _field(text: str, field: str, low: int, high: int, names: dict[str, int]) -> frozenset[int]:
    values: set[int] = set()
    for part in text.split(","):
        if not part:
            raise ScheduleError(f"{field}: empty list item in {text!r}")
        span, slash, step_text = part.partition("/")
        step = 1
        if slash:
            if not step_text.isdigit() or int(step_text) == 0:
                raise ScheduleError(f"{field}: step {step_text!r} must be a positive number")
            step = int(step_text)
        if span == "*":
            first, last = low, high
        elif "-" in span:
            start, _, end = span.partition("-")
            first, last = _value(start, field, low, high, names), _value(end, field, low, high, names)
            if first > last:
                raise ScheduleError(f"{field}: range {span!r} runs backwards")
        else:
            first = _value(span, field, low, high, names)
            last = high if slash else first
        values.update(range(first, last + 1, step))
    return frozenset(values)


@dataclass(frozen=True)
class CronSchedule:
    """A parsed NCRONTAB expression. `next_after(moment)` is the first matching second strictly after `moment`."""

    expression: str
    seconds: frozenset[int]
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday

    @classmethod
    def parse(cls, expression: str) -> "CronSchedule":
        fields = expression.split()
        if len(fields) != 6:
            raise ScheduleError(
                f"schedule {expression!r} has {len(fields)} fields; NCRONTAB needs 6: "
                "{second} {minute} {hour} {day} {month} {day-of-week}"
            )
        try:
            parsed = [_field(text, *spec) for text, spec in zip(fields, _FIELDS, strict=True)]
        except ScheduleError as exc:
            raise ScheduleError(f"schedule {expression!r}: {exc}") from None
        weekdays = frozenset(day % 7 for day in parsed[5])
        second, minute, hour, day, month = parsed[:5]
        return cls(expression, second, minute, hour, day, month, weekdays)

    def _day_matches(self, moment: datetime) -> bool:
        return moment.month in self.months and moment.day in self.days and moment.isoweekday() % 7 in self.weekdays

    def next_after(self, moment: datetime) -> datetime:
        """The next occurrence after `moment` (same time zone as `moment`). Raises ScheduleError when there is none."""
        candidate = moment.replace(microsecond=0) + timedelta(seconds=1)
        limit = moment + timedelta(days=366 * _SEARCH_YEARS)
        while candidate <= limit:
            if not self._day_matches(candidate):
                candidate = candidate.replace(hour=0, minute=0, second=0) + timedelta(days=1)
            elif candidate.hour not in self.hours:
                candidate = candidate.replace(minute=0, second=0) + timedelta(hours=1)
            elif candidate.minute not in self.minutes:
                candidate = candidate.replace(second=0) + timedelta(minutes=1)
            elif candidate.second not in self.seconds:
                candidate += timedelta(seconds=1)
            else:
                return candidate
        raise ScheduleError(f"schedule {self.expression!r} has no occurrence within {_SEARCH_YEARS} years")
