"""The `azurite` fixture: one Azurite per test session, on free loopback ports, with its data in a temporary folder.

Use it from a conftest.py (`from tests.azurite_fixture import azurite`) and mark the tests `@pytest.mark.azurite`.
It yields a `tools.azurite.Azurite`; `azurite.connection_string` is what AzureWebJobsStorage would hold. Tests that
share it should use their own queue, container or table names. Without node_modules/.bin/azurite the tests skip
locally (run `npm ci`) and fail in CI (CI=true), where a missing emulator must not pass silently.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator, Mapping

import pytest

from tools.azurite import AZURITE_BIN, Azurite, AzuriteNotInstalled, azurite_command, start_azurite


def require_azurite(binary: Path = AZURITE_BIN, env: Mapping[str, str] = os.environ) -> None:
    """Skip the test (locally) or fail it (CI=true) when Azurite is not installed."""
    try:
        azurite_command(binary)
    except AzuriteNotInstalled as error:
        if env.get("CI", "").strip().lower() == "true":
            pytest.fail(f"CI=true and {error}", pytrace=False)
        pytest.skip(f"{error} (the Azure Storage emulator, needed by this test)")


@pytest.fixture(scope="session")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Azurite]:
    require_azurite()
    with start_azurite(tmp_path_factory.mktemp("azurite")) as running:
        yield running
