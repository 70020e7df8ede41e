"""Real OpenLineage events from the shared reference material (`../shared/openlineage`): single events, and the
complete real runs, each a folder of events in emission order. Without ../shared there are none: the tests that use
them are marked `shared` (tests/shared_marker.py) and collect without it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.repository import SHARED

SHARED_OPENLINEAGE = SHARED / "openlineage"
EVENTS = SHARED_OPENLINEAGE / "events"
SEQUENCES = SHARED_OPENLINEAGE / "sequences"


def real_event_files() -> list[Path]:
    """The real events emitted by producers (reference/openlineage.md says which are real, not templates)."""
    return sorted([*EVENTS.glob("compat-tests_*.json"), *EVENTS.glob("website-docs__*.json")])


def sequence_folders() -> list[Path]:
    """The three complete real Spark runs, each a folder of events in emission order."""
    return sorted(p for p in SEQUENCES.iterdir() if p.is_dir()) if SEQUENCES.is_dir() else []


def load_event(name: str) -> dict:
    """One event of ../shared/openlineage/events, by file name."""
    return json.loads((EVENTS / name).read_text())


def load_sequence(name: str) -> list[dict]:
    """The events of one real sequence in emission order (its files are numbered; `_config.json` and the like are
    not events)."""
    files = sorted((SEQUENCES / name).glob("[0-9]*.json"), key=lambda p: int(p.stem))
    return [json.loads(p.read_text()) for p in files]


def events_of_run(events: list[dict], run_id: str) -> list[dict]:
    return [e for e in events if e["run"]["runId"] == run_id]
