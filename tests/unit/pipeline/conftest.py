"""Fixtures of the runner's tests: a fresh run-state store of each kind (tests/conftest.py's `run_state_store`), a
fresh run-history store of the same kind, and the mapping engine with the one rule file (tests/support/rules.py; read, never edited)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from olparser.naming import MappingEngine
from tests.support.rules import MAPPINGS_PATH
from tests.support.stores import open_test_history_store, open_test_run_state_store


@pytest.fixture
def store(run_state_store):
    return run_state_store


@pytest.fixture
def fresh_store(run_state_store_kind: str, tmp_path: Path, request: pytest.FixtureRequest):
    """Opens another empty store of the same kind (closed after the test)."""
    opened = []
    numbers = itertools.count(1)

    def open_one():
        folder = tmp_path / f"store-{next(numbers)}"
        folder.mkdir()
        opened.append(open_test_run_state_store(run_state_store_kind, folder, request))
        return opened[-1]

    yield open_one
    for store in opened:
        store.close()


@pytest.fixture
def fresh_history(run_state_store_kind: str, tmp_path: Path, request: pytest.FixtureRequest):
    """Opens another empty run-history store of the kind the run-state store is (closed after the test)."""
    opened = []
    numbers = itertools.count(1)

    def open_one():
        folder = tmp_path / f"history-{next(numbers)}"
        folder.mkdir()
        opened.append(open_test_history_store(run_state_store_kind, folder, request, retention_days=36500))
        return opened[-1]

    yield open_one
    for history in opened:
        history.close()


@pytest.fixture
def engine() -> MappingEngine:
    return MappingEngine.from_path(MAPPINGS_PATH)
