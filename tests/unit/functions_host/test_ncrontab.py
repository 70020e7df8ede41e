"""NCRONTAB schedules (six fields, seconds first), as Azure's timer trigger reads them."""

from datetime import datetime, timezone

import pytest

from tools.functions_host.ncrontab import CronSchedule, ScheduleError

UTC = timezone.utc


def at(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def occurrences(expression: str, start: datetime, count: int) -> list[str]:
    schedule, moment, found = CronSchedule.parse(expression), start, []
    for _ in range(count):
        moment = schedule.next_after(moment)
        found.append(moment.strftime("%a %Y-%m-%d %H:%M:%S"))
    return found


def test_every_minute_on_the_minute_is_the_lead_timer_default():
    assert occurrences("0 */1 * * * *", at(2026, 3, 1, 10, 15, 30), 3) == [
        "Sun 2026-03-01 10:16:00",
        "Sun 2026-03-01 10:17:00",
        "Sun 2026-03-01 10:18:00",
    ]


def test_the_next_occurrence_is_strictly_after_the_given_moment():
    assert occurrences("0 */5 * * * *", at(2026, 3, 1, 10, 15, 0), 2) == [
        "Sun 2026-03-01 10:20:00",
        "Sun 2026-03-01 10:25:00",
    ]


def test_seconds_steps_lists_and_ranges():
    assert occurrences(
        "*/20 * * * * *",
        at(
            2026,
            1,
            1,
            0,
            0,
            0,
        ),
        4,
    ) == ["Thu 2026-01-01 00:00:20", "Thu 2026-01-01 00:00:40", "Thu 2026-01-01 00:01:00", "Thu 2026-01-01 00:01:20"]
    assert occurrences("5,10 30 9-10 * * *", at(2026, 1, 1, 9, 30, 5), 3) == [
        "Thu 2026-01-01 09:30:10",
        "Thu 2026-01-01 10:30:05",
        "Thu 2026-01-01 10:30:10",
    ]
    assert occurrences("0 0 8-18/5 * * *", at(2026, 1, 1, 0, 0, 0), 3) == [
        "Thu 2026-01-01 08:00:00",
        "Thu 2026-01-01 13:00:00",
        "Thu 2026-01-01 18:00:00",
    ]


def test_day_names_and_month_names_in_any_case():
    assert occurrences("0 30 9 * * Mon-Fri", at(2026, 1, 2, 10, 0, 0), 2) == [
        "Mon 2026-01-05 09:30:00",
        "Tue 2026-01-06 09:30:00",
    ]
    assert occurrences("0 0 12 1 jan,JULY *", at(2026, 1, 1, 12, 0, 0), 2) == [
        "Wed 2026-07-01 12:00:00",
        "Fri 2027-01-01 12:00:00",
    ]
    assert occurrences("0 0 0 * * 7", at(2026, 1, 1, 0, 0, 0), 1) == ["Sun 2026-01-04 00:00:00"]  # 7 is Sunday too


def test_day_of_month_and_day_of_week_must_both_hold_as_in_ncrontab():
    # Friday the 13th: both fields restricted, so a day must be the 13th AND a Friday.
    assert occurrences("0 0 0 13 * Fri", at(2026, 1, 1, 0, 0, 0), 2) == [
        "Fri 2026-02-13 00:00:00",
        "Fri 2026-03-13 00:00:00",
    ]


def test_month_ends_and_leap_days():
    assert occurrences("0 0 0 31 * *", at(2026, 1, 31, 0, 0, 0), 2) == [
        "Tue 2026-03-31 00:00:00",
        "Sun 2026-05-31 00:00:00",
    ]
    assert occurrences("0 0 0 29 2 *", at(2026, 1, 1, 0, 0, 0), 1) == ["Tue 2028-02-29 00:00:00"]


def test_the_time_zone_of_the_moment_is_kept():
    local = timezone.utc
    assert CronSchedule.parse("0 0 * * * *").next_after(at(2026, 1, 1, 0, 0, 1)).tzinfo is local


def refusal(expression: str) -> str:
    with pytest.raises(ScheduleError) as raised:
        CronSchedule.parse(expression)
    return str(raised.value)


def test_invalid_schedules_name_the_field_and_the_problem():
    bad = [
        "0 */5 * * *",
        "60 * * * * *",
        "0 0 24 * * *",
        "0 0 0 0 * *",
        "0 0 0 * 13 *",
        "0 0 0 * * 8",
        "*/0 * * * * *",
        "0 10-5 * * * *",
        "0 0 0 * * Funday",
        "0 0 0 1,,2 * *",
    ]
    assert [refusal(expression) for expression in bad] == [
        "schedule '0 */5 * * *' has 5 fields; NCRONTAB needs 6: {second} {minute} {hour} {day} {month} {day-of-week}",
        "schedule '60 * * * * *': second: 60 is outside 0-59",
        "schedule '0 0 24 * * *': hour: 24 is outside 0-23",
        "schedule '0 0 0 0 * *': day: 0 is outside 1-31",
        "schedule '0 0 0 * 13 *': month: 13 is outside 1-12",
        "schedule '0 0 0 * * 8': day-of-week: 8 is outside 0-7",
        "schedule '*/0 * * * * *': second: step '0' must be a positive number",
        "schedule '0 10-5 * * * *': minute: range '10-5' runs backwards",
        "schedule '0 0 0 * * Funday': day-of-week: 'Funday' is not a number or a name",
        "schedule '0 0 0 1,,2 * *': day: empty list item in '1,,2'",
    ]


def test_a_schedule_that_never_fires_says_so():
    with pytest.raises(ScheduleError) as raised:
        CronSchedule.parse("0 0 0 30 2 *").next_after(at(2026, 1, 1))
    assert str(raised.value) == "schedule '0 0 0 30 2 *' has no occurrence within 8 years"
