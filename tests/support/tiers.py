"""The tiers of the suite: markers by folder, and the longer timeout of the Spark and `slow` tests (applied by
tests/conftest.py's collection hook)."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parents[1]
FOLDER_MARKERS = {"e2e": "e2e", "spark": "spark"}  # tests/<folder>/... -> marker every test there carries
SLOW_TEST_TIMEOUT = 600  # seconds, for tests/spark and tests marked `slow` (pyproject's `timeout` is for the rest)


def mark_tiers(items: list[pytest.Item]) -> None:
    """Every test under tests/e2e is `e2e` and under tests/spark is `spark`, whatever its module says, so that
    `-m "not e2e"` means what it says; Spark and `slow` tests get SLOW_TEST_TIMEOUT unless they name their own."""
    for item in items:
        path = Path(item.path).resolve()
        parts = path.relative_to(TESTS_DIR).parts if path.is_relative_to(TESTS_DIR) else ()
        marker = FOLDER_MARKERS.get(parts[0]) if len(parts) > 1 else None
        if marker and item.get_closest_marker(marker) is None:
            item.add_marker(marker)
        if item.get_closest_marker("spark") is not None:
            item.add_marker(pytest.mark.xdist_group("spark"))  # `make test` (--dist loadgroup): one worker, one session
        if (item.get_closest_marker("spark") or item.get_closest_marker("slow")) and not item.get_closest_marker(
            "timeout"
        ):
            item.add_marker(pytest.mark.timeout(SLOW_TEST_TIMEOUT))
