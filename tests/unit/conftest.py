"""Fixtures shared by the unit tests: queue services (the same contract runs on the SQLite queues and on Azurite)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from olparser.adapters.delivery.queues import AzureQueueService, QueueService, SqliteQueueService


@pytest.fixture(params=["sqlite", pytest.param("azurite", marks=pytest.mark.azurite)])
def queue_service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[QueueService]:
    if request.param == "sqlite":
        service = SqliteQueueService(tmp_path / "queues.sqlite3")
        yield service
        service.close()
    else:
        yield AzureQueueService(request.getfixturevalue("azurite").connection_string)
