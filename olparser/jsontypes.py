"""The one JSON alias: a JSON object as the connector reads and writes it (an event, a facet, an Atlas entity, a
stored row's document), `dict[str, Any]`. Every module that names the type imports it from here."""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]
