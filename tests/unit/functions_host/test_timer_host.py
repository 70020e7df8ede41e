"""Timer triggers in the local host: the sample app's `every_second` timer run on its schedule with a TimerRequest."""

import logging
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support.waiting import wait_until
from tools.functions_host.functions import BindingSpec, describe_functions, load_app
from tools.functions_host.ncrontab import ScheduleError
from tools.functions_host.timer_host import TimerTriggers, resolve_schedule

SAMPLE = Path(__file__).parent / "sample_app" / "function_app.py"


@pytest.fixture
def timers():
    """The sample app's timers (not started), and the module state its timer writes to."""
    functions = describe_functions(load_app(SAMPLE))
    triggers = TimerTriggers(functions, deliveries={})
    module = triggers.timers[0].function.user_function.__globals__
    yield triggers, module
    triggers.stop(10)


def wait_for_ticks(module: dict, count: int, timeout: float = 20.0) -> list[dict]:
    wait_until(lambda: len(module["TICKS"]) >= count, timeout=timeout, what=f"{count} ticks")
    return list(module["TICKS"])


def test_only_timer_functions_are_taken_and_described(timers):
    triggers, _module = timers
    assert [t.function.name for t in triggers.timers] == ["every_second"]
    assert triggers.describe() == "timer triggers: every_second (* * * * * *) (not running)"
    assert triggers.status() == {
        "every_second": {
            "schedule": "* * * * * *",
            "runs": 0,
            "failures": 0,
            "running": False,
            "lastRun": None,
            "lastResult": None,
            "lastPastDue": False,
            "nextRun": None,
        }
    }


def test_runs_on_startup_then_on_its_schedule_with_a_timer_request(timers):
    triggers, module = timers
    triggers.start()
    ticks = wait_for_ticks(module, 3)
    triggers.stop(10)
    assert [tick["pastDue"] for tick in ticks[:3]] == [False, False, False]
    assert all(tick["next"] for tick in ticks)
    status = triggers.status()["every_second"]
    assert (status["runs"], status["failures"], status["lastResult"], status["running"]) == (
        len(module["TICKS"]),
        0,
        "succeeded",
        False,
    )
    assert status["lastRun"].endswith("+00:00") and status["nextRun"] > status["lastRun"]
    assert triggers.describe() == "timer triggers: every_second (* * * * * *) (running)"


def test_an_overrunning_run_is_never_overlapped_and_the_missed_occurrences_become_one_past_due_run(timers):
    triggers, module = timers
    module["TICK_BEHAVIOUR"]["seconds"] = 1.6
    triggers.start()
    ticks = wait_for_ticks(module, 3, timeout=30)
    triggers.stop(10)
    assert all(later["started"] >= earlier["ended"] for earlier, later in zip(ticks, ticks[1:], strict=False))
    assert [tick["pastDue"] for tick in ticks[:3]] == [False, True, True]


def test_a_failing_run_is_logged_in_one_line_and_the_next_one_still_runs(timers, caplog):
    triggers, module = timers
    module["TICK_BEHAVIOUR"]["fail"] = True
    with caplog.at_level(logging.INFO, logger="ol2purview.host"):
        triggers.start()
        wait_for_ticks(module, 2)
        triggers.stop(10)
    failures = [r for r in caplog.records if r.getMessage().startswith("timer 'every_second' failed")]
    assert failures and failures[0].getMessage() == (
        "timer 'every_second' failed: RuntimeError: the tick failed on purpose"
    )
    assert all(r.exc_info is None and r.levelname == "WARNING" for r in failures)
    status = triggers.status()["every_second"]
    assert status["failures"] == status["runs"] >= 2
    assert status["lastResult"] == "failed: RuntimeError"


def test_a_schedule_may_name_an_app_setting():
    function = describe_functions(load_app(SAMPLE))[-1]
    named = replace(function, trigger=BindingSpec("timer", "timerTrigger", "in", {"schedule": "%TICK_SCHEDULE%"}))
    assert resolve_schedule(named, {"TICK_SCHEDULE": "0 */5 * * * *"}).expression == "0 */5 * * * *"
    with pytest.raises(ScheduleError) as raised:
        resolve_schedule(named, {})
    assert str(raised.value) == (
        "function 'every_second': schedule %TICK_SCHEDULE% names app setting TICK_SCHEDULE, which is not set"
    )


def test_a_bad_schedule_names_the_function():
    function = describe_functions(load_app(SAMPLE))[-1]
    bad = replace(function, trigger=BindingSpec("timer", "timerTrigger", "in", {"schedule": "0 */5 * * *"}))
    with pytest.raises(ScheduleError) as raised:
        resolve_schedule(bad, {})
    assert str(raised.value).startswith("function 'every_second': schedule '0 */5 * * *' has 5 fields")
