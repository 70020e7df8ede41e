"""Uploading lineage to Purview or any Apache Atlas v2 endpoint: client wiring, retries, batching, existence cache,
typedef registration."""
from .client import AtlasCatalogClient, make_atlas_client
from .errors import CatalogRejected, CatalogUnavailable
from .retry import RetryPolicy
from .target import CatalogTarget, resolve_target
from .typedefs import TypedefReport, entity_type_names, load_typedefs, register_typedefs
from .uploader import CatalogUploader, DeleteReport, UploadReport

__all__ = [
    "AtlasCatalogClient", "CatalogRejected", "CatalogTarget", "CatalogUnavailable", "CatalogUploader", "DeleteReport",
    "RetryPolicy",
    "TypedefReport", "UploadReport", "entity_type_names", "load_typedefs", "make_atlas_client", "register_typedefs", "resolve_target",
]
