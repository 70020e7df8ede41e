"""The `azurite` fixture: one Azurite per test session, on free loopback ports, with its data in a temporary folder.

tests/conftest.py registers this module as a plugin (`pytest_plugins`), so the fixture is defined once for the whole
suite: every test that asks for `azurite` (and marks itself `@pytest.mark.azurite`) gets the same emulator, started
the first time one asks and stopped at the end of the session. Do not import the fixture into a conftest or a test
module: each import would be a definition of its own, with an emulator of its own. It yields a
`tools.azurite.Azurite`; `azurite.connection_string` is what AzureWebJobsStorage would hold. Tests that share it keep
apart by their own queue, container and table names (a random suffix each). Without node_modules/.bin/azurite the tests skip
when run by hand (run `npm ci`) and fail under `make test` (OL2PURVIEW_TESTS_STRICT=1) and in CI (CI=true), where a
missing emulator must not pass silently.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator, Mapping

import pytest

from tests.support.strict_mode import STRICT_ENV, skips_are_failures
from tools.azurite import AZURITE_BIN, Azurite, AzuriteNotInstalled, azurite_command, start_azurite


def require_azurite(binary: Path = AZURITE_BIN, env: Mapping[str, str] = os.environ) -> None:
    """Skip the test (by hand) or fail it (`make test`, CI=true) when Azurite is not installed."""
    try:
        azurite_command(binary)
    except AzuriteNotInstalled as error:
        if skips_are_failures(env):
            why = "CI=true" if env.get("CI", "").strip().lower() == "true" else f"{STRICT_ENV}=1 (make test)"
            pytest.fail(f"{why} and {error}", pytrace=False)
        pytest.skip(f"{error} (the Azure Storage emulator, needed by this test)")


@pytest.fixture(scope="session")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Azurite]:
    require_azurite()
    with start_azurite(tmp_path_factory.mktemp("azurite")) as running:
        yield running
