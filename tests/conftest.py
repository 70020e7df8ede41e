"""Fixtures and hooks shared by every test: where the project and the shared reference material live, ports, strict
mode, the tiers, the run-state stores, and the tests' own copy of the mapping rules. Only fixtures, hooks and plugin
wiring live here; helpers that tests import live in tests/support (tests/unit/test_test_layout.py).

Strict mode (`make test` sets OL2PURVIEW_TESTS_STRICT=1; CI=true means the same): a test that cannot run here
(no Azurite, no Chromium) must not pass silently, so every skip makes the run fail, with the list of what skipped.

The shared reference material (`../shared`): a clone from GitHub has none. There, the tests that need it (marker
`shared`, tests/shared_marker.py) are skipped, which strict mode allows, and the run ends with one line saying how
many and why (tests/support/strict_mode.py). `.ci/run`, next to `../shared`, sets OL2PURVIEW_REQUIRE_SHARED=1 (its own variable: GitHub sets CI too):
then a missing `../shared` stops the run before any test.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests import shared_marker
from tests.support import rules
from tests.support.ports import free_port
from tests.support.repository import PROJECT_ROOT, SHARED
from tests.support.stores import RUN_STATE_STORE_KINDS, open_test_run_state_store
from tests.support.strict_mode import (
    REQUIRE_SHARED_ENV,
    SHARED_SKIP_REASON,
    STRICT_ENV,
    shared_required,
    skips_are_failures,
)
from tests.support.tiers import mark_tiers

_SHARED_TESTS: list[int] = []  # how many collected tests need ../shared (tests/shared_marker.py)
# Fixtures defined once for the whole session, whichever folder asks for them (see each module's docstring).
pytest_plugins = ("tests.support.azurite_fixture",)

# The tests' rules (tests/support/rules.py): every process a test starts inherits them through the environment.
rules.use_the_copy_in_child_processes()


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


# --- tiers: markers by folder, and the longer timeout (tests/support/tiers.py) ----------------------------------------
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


# --- the run-state stores: every test of the runner runs on each store the product ships (tests/support/stores.py) ---
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
