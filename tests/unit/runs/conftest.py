"""Helpers of the run tests: the real Spark sequences, read in emission order."""

from __future__ import annotations

import json

from tests.support.repository import SHARED

SEQUENCES = SHARED / "openlineage" / "sequences"


def load_sequence(name: str) -> list[dict]:
    """The events of one real sequence in emission order (files are numbered)."""
    folder = SEQUENCES / name
    files = sorted((p for p in folder.glob("*.json") if not p.name.startswith("_")), key=lambda p: int(p.stem))
    return [json.loads(p.read_text()) for p in files]


def events_of_run(events: list[dict], run_id: str) -> list[dict]:
    return [e for e in events if e["run"]["runId"] == run_id]
