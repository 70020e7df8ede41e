"""Uploading lineage to Purview or any Apache Atlas v2 endpoint: client wiring, retries, batching, existence cache,
typedef registration, the catalog rules that call the catalog (rules.py)."""

from olparser.adapters.catalog.client import AtlasCatalogClient, make_atlas_client
from olparser.adapters.catalog.errors import CatalogRejected, CatalogUnavailable
from olparser.adapters.catalog.retry import RetryPolicy
from olparser.adapters.catalog.rules import read_active, retry_for
from olparser.adapters.catalog.target import CatalogTarget, resolve_target
from olparser.adapters.catalog.typedefs import TypedefReport, entity_type_names, load_typedefs, register_typedefs
from olparser.adapters.catalog.uploader import CatalogUploader
from olparser.lineage.plan import DeleteReport, UploadReport

__all__ = [
    "AtlasCatalogClient",
    "CatalogRejected",
    "CatalogTarget",
    "CatalogUnavailable",
    "CatalogUploader",
    "DeleteReport",
    "RetryPolicy",
    "TypedefReport",
    "UploadReport",
    "entity_type_names",
    "load_typedefs",
    "make_atlas_client",
    "read_active",
    "register_typedefs",
    "resolve_target",
    "retry_for",
]
