"""Timer triggers for the local host: each `@app.timer_trigger` function runs on its NCRONTAB schedule.

As the Functions host does: the schedule may name an app setting (`%NAME%`); `runOnStartup` runs it once at start;
the function receives a `func.TimerRequest` whose `past_due` is true when the run is later than it was due: one run
of a function at a time, so occurrences that passed while a run went on are folded into one run, started at once
with `past_due` (as is a run that starts over a second late because the machine was busy); an exception is logged
and the next occurrence runs as usual.
Times are UTC. Each function has its own thread, stopped by `stop()` (a run in progress is waited for).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Collection, Mapping

from azure.functions.timer import TimerRequest  # the worker's own TimerRequest (has past_due, schedule_status)

from .functions import FunctionSpec
from .invocation import BindingDelivery, invoke_in_thread
from .ncrontab import CronSchedule, ScheduleError

TIMER_TRIGGER = "timerTrigger"
PAST_DUE_AFTER = timedelta(seconds=1)  # a run starting this much after its due time is past due
_APP_SETTING = re.compile(r"^%([A-Za-z_][A-Za-z0-9_]*)%$")
log = logging.getLogger("ol2purview.host")
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def resolve_schedule(function: FunctionSpec, env: Mapping[str, str] = os.environ) -> CronSchedule:
    """The function's schedule, `%NAME%` read from the app settings. Raises ScheduleError naming the function."""
    text = str(function.trigger.settings.get("schedule") or "")
    setting = _APP_SETTING.match(text.strip())
    if setting:
        if not env.get(setting.group(1)):
            raise ScheduleError(
                f"function {function.name!r}: schedule {text} names app setting {setting.group(1)}, which is not set"
            )
        text = env[setting.group(1)]
    try:
        schedule = CronSchedule.parse(text)
        schedule.next_after(utc_now())  # a schedule that never fires (30 February) fails here, not in its thread
    except ScheduleError as exc:
        raise ScheduleError(f"function {function.name!r}: {exc}") from None
    return schedule


@dataclass
class TimerStatus:
    """What one timer did; `status()` gives it as JSON for the status endpoint."""

    schedule: str
    runs: int = 0
    failures: int = 0
    running: bool = False
    last_run: datetime | None = None
    last_result: str | None = None  # succeeded | failed: <ExceptionType>
    last_past_due: bool = False
    next_run: datetime | None = None

    def to_json(self) -> dict[str, Any]:
        def iso(moment: datetime | None) -> str | None:
            return moment.isoformat() if moment else None

        return {
            "schedule": self.schedule,
            "runs": self.runs,
            "failures": self.failures,
            "running": self.running,
            "lastRun": iso(self.last_run),
            "lastResult": self.last_result,
            "lastPastDue": self.last_past_due,
            "nextRun": iso(self.next_run),
        }


class TimerTrigger:
    """One timer-triggered function and its thread."""

    def __init__(
        self,
        function: FunctionSpec,
        schedule: CronSchedule,
        deliveries: Mapping[str, BindingDelivery],
        clock: Clock = utc_now,
    ) -> None:
        self.function = function
        self.schedule = schedule
        self._deliveries = deliveries
        self._clock = clock
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.state = TimerStatus(schedule.expression)

    @property
    def run_on_startup(self) -> bool:
        return bool(self.function.trigger.settings.get("runOnStartup"))

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name=f"timer:{self.function.name}", daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def status(self) -> dict[str, Any]:
        with self._lock:
            return self.state.to_json()

    def _loop(self) -> None:
        due = self._clock() if self.run_on_startup else self.schedule.next_after(self._clock())
        previous: datetime | None = None
        missed = False
        while True:
            with self._lock:
                self.state.next_run = due
            wait = (due - self._clock()).total_seconds()
            if self._stop.wait(max(0.0, wait)):
                return
            late = self._clock() - due > PAST_DUE_AFTER
            self._run(due, previous, past_due=missed or late)
            previous = due
            following = self.schedule.next_after(due)
            # Occurrences that passed while this run went on are folded into one past-due run, started at once.
            missed = following <= self._clock()
            due = self._latest_missed(following) if missed else following

    def _latest_missed(self, first_missed: datetime) -> datetime:
        now, latest = self._clock(), first_missed
        while (following := self.schedule.next_after(latest)) <= now:
            latest = following
        return latest

    def _run(self, due: datetime, previous: datetime | None, past_due: bool) -> None:
        request = TimerRequest(
            past_due=past_due,
            schedule={"AdjustForDST": True},
            schedule_status={
                "Last": (previous or due).isoformat(),
                "Next": self.schedule.next_after(due).isoformat(),
                "LastUpdated": self._clock().isoformat(),
            },
        )
        with self._lock:
            self.state.running = True
        started = time.perf_counter()
        result = "succeeded"
        try:
            invoke_in_thread(self.function, request, self._deliveries)
        except Exception as exc:  # logged, not fatal: the next occurrence runs as usual
            result = f"failed: {type(exc).__name__}"
            log.warning("timer %r failed: %s: %s", self.function.name, type(exc).__name__, str(exc)[:200])
        else:
            # the function logs what it did; the host says more only when the run was late
            log.log(
                logging.INFO if past_due else logging.DEBUG,
                "timer %r ran (%.1f ms%s)",
                self.function.name,
                (time.perf_counter() - started) * 1000,
                ", past due" if past_due else "",
            )
        with self._lock:
            self.state.running = False
            self.state.runs += 1
            self.state.failures += result != "succeeded"
            self.state.last_run = due
            self.state.last_result = result
            self.state.last_past_due = past_due


class TimerTriggers:
    """The timer-triggered functions of an app. Schedules are checked when built, so a bad one fails the start."""

    def __init__(
        self,
        functions: Collection[FunctionSpec],
        deliveries: Mapping[str, BindingDelivery],
        env: Mapping[str, str] = os.environ,
        clock: Clock = utc_now,
    ) -> None:
        self.timers = [
            TimerTrigger(f, resolve_schedule(f, env), deliveries, clock)
            for f in functions
            if f.trigger.type == TIMER_TRIGGER
        ]
        self.started = False

    def start(self) -> None:
        for timer in self.timers:
            timer.start()
        self.started = bool(self.timers)

    def stop(self, timeout: float | None = None) -> None:
        for timer in self.timers:
            timer.stop(timeout)

    def status(self) -> dict[str, Any]:
        return {timer.function.name: timer.status() for timer in self.timers}

    def describe(self) -> str:
        names = ", ".join(f"{t.function.name} ({t.schedule.expression})" for t in self.timers)
        return f"timer triggers: {names or 'none'} ({'running' if self.started else 'not running'})"
