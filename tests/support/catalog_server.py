"""The catalog-server tests' login, and the catalog's call counter read and reset."""

from __future__ import annotations

import requests

from tools.catalog import CatalogServer

USER, PASSWORD = "atlas-user", "s3cret-pw"


def calls_since_reset(catalog: CatalogServer) -> dict[str, int]:
    """The catalog's calls by route since the last reset, then reset."""
    counted = requests.get(f"{catalog.url}/_ol2purview/calls", timeout=10).json()["byRoute"]
    requests.post(f"{catalog.url}/_ol2purview/calls/reset", timeout=10).raise_for_status()
    return counted
