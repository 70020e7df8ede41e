"""Shared fixtures for the naming tests: the one rule file (config/, tests/support/rules.py) and the reference
vectors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from olparser.naming import MappingEngine, MountPoint, mounts_from_facet
from tests.support.rules import MAPPINGS_PATH


@pytest.fixture(scope="session")
def default_engine() -> MappingEngine:
    return MappingEngine.from_path(MAPPINGS_PATH)


@pytest.fixture(scope="session")
def vectors_dir(shared_dir: Path) -> Path:
    return shared_dir / "vectors"


@pytest.fixture(scope="session")
def reference_mounts(vectors_dir: Path) -> tuple[MountPoint, ...]:
    return mounts_from_facet(json.loads((vectors_dir / "mount_points.json").read_text()))
