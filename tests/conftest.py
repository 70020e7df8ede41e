"""Fixtures shared by every test: where the project and the shared reference material live, ports, strict mode, and
the tests' own copy of the mapping rules.

Strict mode (`make test` sets OL2PURVIEW_TESTS_STRICT=1; CI=true means the same): a test that cannot run here
(no Azurite, no Chromium) must not pass silently, so every skip makes the run fail, with the list of what skipped.

The shared reference material (`../shared`): a clone from GitHub has none. There, the tests that need it (marker
`shared`, tests/shared_marker.py) are skipped, which strict mode allows, and the run ends with one line saying how
many and why. `.ci/run`, next to `../shared`, sets OL2PURVIEW_REQUIRE_SHARED=1 (its own variable: GitHub sets CI too):
then a missing `../shared` stops the run before any test.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import pytest

from tests import shared_marker
from tests.support import rules
from tests.support.ports import free_port
from tests.support.repository import PROJECT_ROOT, SHARED

STRICT_ENV = "OL2PURVIEW_TESTS_STRICT"
REQUIRE_SHARED_ENV = "OL2PURVIEW_REQUIRE_SHARED"  # .ci/run: ../shared must be there, its tests run
SHARED_SKIP_REASON = "needs ../shared (the shared reference material), which a clone from GitHub does not have"
_SHARED_TESTS: list[int] = []  # how many collected tests need ../shared (tests/shared_marker.py)
# Fixtures defined once for the whole session, whichever folder asks for them (see each module's docstring).
pytest_plugins = ("tests.support.azurite_fixture",)

# The tests' rules (tests/support/rules.py): every process a test starts inherits them through the environment.
rules.use_the_copy_in_child_processes()


def skips_are_failures(env: Mapping[str, str] = os.environ) -> bool:
    """Whether a test that cannot run here must fail rather than skip (`make test`, CI)."""
    return env.get("CI", "").strip().lower() == "true" or env.get(STRICT_ENV, "").strip() == "1"


@pytest.fixture(scope="session")
def project_root() -> Path:
    return PROJECT_ROOT


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"the shared reference material is expected at {SHARED}")
    return SHARED


@pytest.fixture
def port() -> int:
    return free_port()


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port where nothing listens, for as long as the test runs: it is bound (so no other process can
    take it) but never listening, so every connection to it is refused at once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


def lines_run(fn: Callable[[], object], where: str) -> int:
    """How many lines of the code in files whose path starts with `where` run for `fn()` (sys.settrace): a count of
    work, the same on a loaded machine, for tests that bound how work grows (never a timer: tests/unit/test_no_timing.py)."""
    count = 0

    def trace(frame, event, arg):  # noqa: ARG001 - sys.settrace's signature
        nonlocal count
        if not frame.f_code.co_filename.startswith(where):
            return None
        if event == "line":
            count += 1
        return trace

    sys.settrace(trace)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count


# --- strict mode: skips fail the run ---------------------------------------------------------------------------------
_SKIPPED: list[str] = []
# the tests skipped for want of ../shared (their reports reach pytest-xdist's controller too)
_SHARED_SKIPPED: list[str] = []


def _record_skip(report: pytest.CollectReport | pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        keywords = getattr(report, "keywords", None) or {}
        # said once in the summary; allowed in strict mode (a clone from GitHub): ours, or another skip of a test that
        # needs ../shared (pytest's own for a parameter list read from there, empty without it)
        if SHARED_SKIP_REASON in reason or (shared_marker.MARKER in keywords and not SHARED.is_dir()):
            _SHARED_SKIPPED.append(report.nodeid)
            return
        _SKIPPED.append(f"{report.nodeid or report.fspath}: {reason}")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _record_skip(report)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    _record_skip(report)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)  # a pytest-xdist worker: tell the controller
    if workeroutput is not None and _SHARED_TESTS:
        workeroutput["shared_tests"] = _SHARED_TESTS[-1]
    if _SKIPPED and skips_are_failures() and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# --- tiers: markers by folder, and the longer timeout -----------------------------------------------------------------
FOLDER_MARKERS = {"e2e": "e2e", "spark": "spark"}  # tests/<folder>/... -> marker every test there carries
SLOW_TEST_TIMEOUT = 600  # seconds, for tests/spark and tests marked `slow` (pyproject's `timeout` is for the rest)


def mark_tiers(items: list[pytest.Item]) -> None:
    """Every test under tests/e2e is `e2e` and under tests/spark is `spark`, whatever its module says, so that
    `-m "not e2e"` means what it says; Spark and `slow` tests get SLOW_TEST_TIMEOUT unless they name their own."""
    tests_dir = Path(__file__).resolve().parent
    for item in items:
        path = Path(item.path).resolve()
        parts = path.relative_to(tests_dir).parts if path.is_relative_to(tests_dir) else ()
        marker = FOLDER_MARKERS.get(parts[0]) if len(parts) > 1 else None
        if marker and item.get_closest_marker(marker) is None:
            item.add_marker(marker)
        if item.get_closest_marker("spark") is not None:
            item.add_marker(pytest.mark.xdist_group("spark"))  # `make test` (--dist loadgroup): one worker, one session
        if (item.get_closest_marker("spark") or item.get_closest_marker("slow")) and not item.get_closest_marker(
            "timeout"
        ):
            item.add_marker(pytest.mark.timeout(SLOW_TEST_TIMEOUT))


def shared_required(env: Mapping[str, str] = os.environ) -> bool:
    """Whether ../shared must be there (`.ci/run`), rather than its tests skipped when it is missing."""
    return env.get(REQUIRE_SHARED_ENV, "").strip() == "1"


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: `-m "not shared"` sees the marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mark_tiers(items)
    _SHARED_TESTS.append(shared_marker.mark(items))
    if SHARED.is_dir():
        return
    if shared_required():
        raise pytest.UsageError(f"{REQUIRE_SHARED_ENV}=1, but the shared reference material is missing at {SHARED}")
    skip = pytest.mark.skip(reason=SHARED_SKIP_REASON)
    for item in items:
        if item.get_closest_marker(shared_marker.MARKER) is not None:
            item.add_marker(skip)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: the controller learns what a worker collected
def pytest_testnodedown(node: Any, error: object) -> None:
    count = getattr(node, "workeroutput", {}).get("shared_tests")
    if count is not None and not _SHARED_TESTS:
        _SHARED_TESTS.append(count)  # every worker collects the whole suite: the first count is the count


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if _SHARED_TESTS:
        deselected = "not shared" in (config.getoption("markexpr") or "").replace("  ", " ")
        where = "deselected (-m \"not shared\")" if deselected else ("run" if SHARED.is_dir() else None)
        if where is None:  # the number of this run's tests that skipped, which pytest's own count includes
            terminalreporter.write_line(
                f"tests that need ../shared (marker `shared`): {len(_SHARED_SKIPPED)} skipped, because {SHARED} "
                "is missing (a clone from GitHub has none; .ci/run requires it)"
            )
        else:
            terminalreporter.write_line(f"tests that need ../shared (marker `shared`): {_SHARED_TESTS[-1]}, {where}")
    if _SKIPPED and skips_are_failures():
        terminalreporter.section(
            f"{len(_SKIPPED)} skipped, which fails the run ({STRICT_ENV}=1 or CI=true)", sep="!", red=True
        )
        for line in _SKIPPED:
            terminalreporter.line(line)


@pytest.fixture(autouse=True)
def _function_app_module_restored() -> Iterator[None]:
    """Loading an app as the host does (`tools.functions_host.functions.load_app`) registers it as module
    `function_app` and puts its folder first on sys.path, as the Functions worker does; a test that loads a sample app
    must not leave it there for the next test, which may import the project's own function_app.py."""
    path, module = list(sys.path), sys.modules.get("function_app")
    yield
    sys.path[:] = path
    if module is None:
        sys.modules.pop("function_app", None)
    else:
        sys.modules["function_app"] = module


# --- the run-state stores: every test of the runner runs on each store the product ships -----------------------------
RUN_STATE_TTL_SECONDS = 7 * 86400


def open_test_run_state_store(
    kind: str, folder: Path, request: pytest.FixtureRequest | None = None, *, ttl_seconds: int = RUN_STATE_TTL_SECONDS
):
    """A fresh, empty run-state store of `kind` (`sqlite`: a file in `folder`; `table`: a new table on the session's
    Azurite, which `request` provides)."""
    if kind == "sqlite":
        from olparser.adapters.run_state.sqlite_store import SqliteRunStateStore

        return SqliteRunStateStore(folder / "runs.sqlite3", ttl_seconds=ttl_seconds)
    import uuid

    from olparser.adapters.run_state.table_store import TableRunStateStore

    emulator = request.getfixturevalue("azurite")
    return TableRunStateStore.from_connection_string(
        emulator.connection_string, f"runs{uuid.uuid4().hex[:16]}", ttl_seconds=ttl_seconds
    )


def open_test_history_store(kind: str, folder: Path, request: pytest.FixtureRequest, *, retention_days: int):
    """A fresh, empty run-history store of `kind` (`sqlite`: a file in `folder`; `table`: a new table on the
    session's Azurite, which `request` provides)."""
    if kind == "sqlite":
        from olparser.adapters.history_stores.sqlite_store import SqliteHistoryStore

        return SqliteHistoryStore(folder / "history.sqlite3", retention_days=retention_days)
    import uuid

    from olparser.adapters.history_stores.table_store import TableHistoryStore

    emulator = request.getfixturevalue("azurite")
    return TableHistoryStore.from_connection_string(
        emulator.connection_string, f"hist{uuid.uuid4().hex[:16]}", retention_days=retention_days
    )


RUN_STATE_STORE_KINDS = ["sqlite", pytest.param("table", marks=pytest.mark.azurite)]


@pytest.fixture(params=RUN_STATE_STORE_KINDS)
def run_state_store_kind(request: pytest.FixtureRequest) -> str:
    """`sqlite` or `table`: each test that uses it runs once per store the product ships."""
    return request.param


@pytest.fixture
def run_state_store(run_state_store_kind: str, tmp_path: Path, request: pytest.FixtureRequest):
    """A fresh, empty run-state store of each kind the product ships (SQLite file; Azure Table on Azurite)."""
    store = open_test_run_state_store(run_state_store_kind, tmp_path, request)
    yield store
    store.close()


def same_store_elsewhere(store):
    """A second handle on the storage of `store`, as another worker process (or instance) would open it."""
    from olparser.adapters.run_state.sqlite_store import SqliteRunStateStore

    if isinstance(store, SqliteRunStateStore):
        return SqliteRunStateStore(store.path, ttl_seconds=store.ttl_seconds, max_datasets=store.max_datasets)
    from azure.data.tables import TableClient

    from olparser.adapters.run_state.table_store import TableRunStateStore

    table = TableClient.from_connection_string(store.connection_string, store.table.table_name)
    return TableRunStateStore(
        table, ttl_seconds=store.ttl_seconds, max_datasets=store.max_datasets, connection_string=store.connection_string
    )
