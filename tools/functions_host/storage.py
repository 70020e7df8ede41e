"""The storage the local host runs the app with, chosen as the Functions host developer would expect.

- `AzureWebJobsStorage` set (and no `--storage`): that account (`UseDevelopmentStorage=true` = Azurite on its default
  ports, started by you).
- `--storage azurite` (the default when `node_modules/.bin/azurite` exists): Azurite is started on free ports (or
  `--azurite-ports`), its data under `<data>/azurite`, stopped by its PID on exit; AzureWebJobsStorage points at it.
- `--storage embedded`: SQLite queues and folder claim checks under the data folder; no emulator.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import MutableMapping

from ..azurite import AZURITE_BIN, Azurite, AzuriteStartError, resolve_connection_string, start_azurite

STORAGE_SETTING = "AzureWebJobsStorage"
STORAGE_MODES = ("azurite", "embedded")


@dataclass
class LocalStorage:
    """What was chosen; `azurite` is set when this process started it (and must stop it)."""

    mode: str  # "connection" | "azurite" | "embedded"
    azurite: Azurite | None = None

    def describe(self) -> str:
        if self.azurite is not None:
            return (
                f"Azurite (pid {self.azurite.pid}, data {self.azurite.location}); "
                f"AzureWebJobsStorage={self.azurite.connection_string}"
            )
        if self.mode == "embedded":
            return "embedded (SQLite queues and claim-check folder in the data folder)"
        return "AzureWebJobsStorage from the environment"

    def stop(self) -> None:
        if self.azurite is not None:
            self.azurite.stop()


def default_mode(env: MutableMapping[str, str]) -> str:
    if env.get(STORAGE_SETTING):
        return "connection"
    return "azurite" if AZURITE_BIN.exists() else "embedded"


def add_storage_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--storage",
        choices=STORAGE_MODES,
        help="queue and claim-check storage: azurite (start the emulator; the default when "
        "node_modules/.bin/azurite exists) or embedded (SQLite in the data folder). "
        "Default: AzureWebJobsStorage when it is set",
    )
    parser.add_argument(
        "--azurite-ports",
        metavar="BLOB,QUEUE,TABLE",
        help="ports for the Azurite this command starts (default: free ports)",
    )


def parse_ports(value: str | None) -> tuple[int, int, int]:
    if not value:
        return (0, 0, 0)
    parts = value.split(",")
    if len(parts) != 3 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"--azurite-ports must be three ports BLOB,QUEUE,TABLE, got {value!r}")
    blob, queue, table = (int(p) for p in parts)
    return blob, queue, table


def open_storage(
    mode: str | None, data_dir: Path, azurite_ports: str | None, env: MutableMapping[str, str] = os.environ
) -> LocalStorage:
    """Start what `mode` needs and set AzureWebJobsStorage in `env` accordingly (removed for embedded)."""
    mode = mode or default_mode(env)
    if mode == "connection":
        env[STORAGE_SETTING] = resolve_connection_string(env[STORAGE_SETTING])
        return LocalStorage("connection")
    if mode == "embedded":
        env.pop(STORAGE_SETTING, None)
        return LocalStorage("embedded")
    blob, queue, table = parse_ports(azurite_ports)
    try:
        azurite = start_azurite(data_dir / "azurite", blob_port=blob, queue_port=queue, table_port=table)
    except AzuriteStartError as exc:
        if "EADDRINUSE" in str(exc):
            raise AzuriteStartError(
                f"an Azurite port of --azurite-ports {azurite_ports} is already in use: pass "
                "other ports, or leave --azurite-ports out to use free ones"
            ) from None
        raise
    env[STORAGE_SETTING] = azurite.connection_string
    return LocalStorage("azurite", azurite)
