"""Fixtures of the run tests: the real Spark sequences, and both run-state stores behind one parametrised fixture."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest

from tests.azurite_fixture import azurite  # noqa: F401  (the session fixture, re-exported)
from tests.conftest import SHARED, open_test_run_state_store

SEQUENCES = SHARED / "openlineage" / "sequences"
TTL_SECONDS = 60


def load_sequence(name: str) -> list[dict]:
    """The events of one real sequence in emission order (files are numbered)."""
    folder = SEQUENCES / name
    files = sorted((p for p in folder.glob("*.json") if not p.name.startswith("_")), key=lambda p: int(p.stem))
    return [json.loads(p.read_text()) for p in files]


def events_of_run(events: list[dict], run_id: str) -> list[dict]:
    return [e for e in events if e["run"]["runId"] == run_id]


@pytest.fixture
def store(run_state_store_kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator:
    """A fresh, empty run-state store of each kind, with a TTL of 60 s."""
    opened = open_test_run_state_store(run_state_store_kind, tmp_path, request, ttl_seconds=TTL_SECONDS)
    yield opened
    opened.close()
