"""Fixtures of the history tests: both run-history stores behind one parametrised fixture (the Table one on
Azurite). Hand-made records: tests/support/history_records.py."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tests.support.history_records import RETENTION_DAYS
from tests.support.stores import RUN_STATE_STORE_KINDS, open_test_history_store


@pytest.fixture(params=RUN_STATE_STORE_KINDS)  # the kinds of store the product ships
def history(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator:
    """A fresh, empty run-history store of each kind, keeping 30 days."""
    with open_test_history_store(request.param, tmp_path, request, retention_days=RETENTION_DAYS) as store:
        yield store
