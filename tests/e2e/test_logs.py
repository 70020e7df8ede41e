"""What `ol2purview serve` logs (#23 item 8), read from the output of a real serve: one format, one line per event;
uvicorn's lifecycle lines once although two servers run (the function host and the embedded catalog); timers quiet
when they did nothing and at INFO when they wrote a run; the typedefs line says what changed, and `up to date` on
the next start."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from olparser.adapters.catalog import load_typedefs
from olparser.settings import TYPEDEFS_DIR
from tests.e2e.lineage_helpers import replay
from tests.support.shared_events import SHARED_OPENLINEAGE
from tests.support.waiting import wait_until
from tools.functions_host.launcher import ServeHandle, start_serve

LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+: \S.*$")
UVICORN_DEFAULT = re.compile(r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL):\s")
EVERY_SECOND = {"LINEAGE_TIMER_SCHEDULE": "* * * * * *"}
TYPE_COUNT = sum(len(defs) for defs in load_typedefs(TYPEDEFS_DIR).values())


def log_lines(output: str) -> list[str]:
    """The lines of the output that are log records (the banner and `ready:` are printed, not logged)."""
    return [line for line in output.splitlines() if line[:1].isdigit() or UVICORN_DEFAULT.match(line)]


def timer_runs(serve: ServeHandle, name: str = "write_due_runs") -> int:
    return serve.status()["timers"][name]["runs"]


def stopped_output(serve: ServeHandle) -> str:
    assert serve.stop() == 0, serve.output()
    return serve.output()


def test_an_idle_serve_logs_one_format_and_its_lifecycle_once(tmp_path: Path):
    serve = start_serve(tmp_path / "data", env=EVERY_SECOND)
    wait_until(lambda: timer_runs(serve) >= 3, timeout=30, what="three timer ticks")
    output = stopped_output(serve)
    lines = log_lines(output)
    assert lines and all(LOG_LINE.match(line) for line in lines), lines
    assert [line.split(": ", 1)[1] for line in lines if "uvicorn.error" in line] == [
        f"Started server process [{serve.process.pid}]",
        "Shutting down",
        f"Finished server process [{serve.process.pid}]",
    ]
    assert "Timer:" not in output and "timer 'write_due_runs' ran" not in output  # three ticks, nothing to do
    [typedefs] = [line for line in output.splitlines() if line.startswith("typedefs: ")]
    assert typedefs.startswith(f"typedefs: created {TYPE_COUNT} (airflow_dag, airflow_task, ")
    assert typedefs.endswith(
        f", +{TYPE_COUNT - 5} more); 0 up to date (2 calls); Purview's Databricks model used as it is (17 types)"
    )  # the embedded catalog is a Purview account: it holds the built-in Databricks types

    again = start_serve(tmp_path / "data", env=EVERY_SECOND)
    output = stopped_output(again)
    assert [line for line in output.splitlines() if line.startswith("typedefs: ")] == [
        f"typedefs: up to date ({TYPE_COUNT} types, 1 call); Purview's Databricks model used as it is (17 types)"
    ]


def test_a_timer_that_writes_a_run_says_so_at_info_on_one_line(tmp_path: Path):
    serve = start_serve(tmp_path / "data", env={**EVERY_SECOND, "INCOMPLETE_RUN_SECONDS": "1"})
    started = tmp_path / "events"
    started.mkdir()
    shutil.copy(SHARED_OPENLINEAGE / "sequences" / "compat-tests__CLL" / "5.json", started / "1.json")  # a START
    replay(serve, started)
    line = wait_until(
        lambda: next((line for line in serve.output().splitlines() if "Timer: written=1" in line), None),
        timeout=30,
        what="the timer writing the incomplete run",
    )
    assert LOG_LINE.match(line) and " INFO ol2purview: Timer: written=1 failed=0 " in line, line
    output = stopped_output(serve)
    assert all(LOG_LINE.match(line) for line in log_lines(output)), log_lines(output)
    assert sum("Timer: " in line for line in output.splitlines()) == 1  # the ticks after it did nothing
