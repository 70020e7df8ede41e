"""Strict mode and the shared reference material: when a skip fails the run, and when ../shared must be there.

Strict mode (`make test` sets OL2PURVIEW_TESTS_STRICT=1; CI=true means the same): a test that cannot run here
(no Azurite, no Chromium) must not pass silently, so every skip makes the run fail (the hooks in tests/conftest.py).
`.ci/run`, next to `../shared`, sets OL2PURVIEW_REQUIRE_SHARED=1 (its own variable: GitHub sets CI too): then a
missing `../shared` stops the run before any test.
"""

from __future__ import annotations

import os
from typing import Mapping

STRICT_ENV = "OL2PURVIEW_TESTS_STRICT"
REQUIRE_SHARED_ENV = "OL2PURVIEW_REQUIRE_SHARED"  # .ci/run: ../shared must be there, its tests run
SHARED_SKIP_REASON = "needs ../shared (the shared reference material), which a clone from GitHub does not have"


def skips_are_failures(env: Mapping[str, str] = os.environ) -> bool:
    """Whether a test that cannot run here must fail rather than skip (`make test`, CI)."""
    return env.get("CI", "").strip().lower() == "true" or env.get(STRICT_ENV, "").strip() == "1"


def shared_required(env: Mapping[str, str] = os.environ) -> bool:
    """Whether ../shared must be there (`.ci/run`), rather than its tests skipped when it is missing."""
    return env.get(REQUIRE_SHARED_ENV, "").strip() == "1"
