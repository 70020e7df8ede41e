"""Entities read straight from the catalog's REST API, as the connector sees them.

The connector keeps its run metadata on Purview's built-in `databricks_process` as business attributes (group
`ol2purview`: olparser/adapters/catalog/business_attributes.py) and reads them back as attributes through its client.
Tests that read the catalog with plain HTTP use `as_the_connector_reads` to see the same attributes; the tests of the
business attributes themselves read the raw answer."""

from __future__ import annotations

from typing import Any

from olparser.adapters.catalog.business_attributes import as_the_connector_reads as _fold
from olparser.adapters.catalog.business_attributes import connector_business_attributes

_CONNECTORS = connector_business_attributes()


def as_the_connector_reads(entity: dict[str, Any]) -> dict[str, Any]:
    """The entity with the connector's business attributes folded into its attributes (never over a real one)."""
    return _fold(entity, _CONNECTORS)
