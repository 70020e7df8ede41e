"""Settings, read from app settings (Azure) or the environment (locally). Every setting is documented in README.md.

One frozen dataclass so that the core receives plain values and never reads the environment itself.
"""
from __future__ import annotations

import json
import os
import re
from importlib import resources
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

PROJECT_ROOT = Path(__file__).resolve().parent.parent
_PACKAGE = resources.files("olparser")
# The rules as shipped (package data): what a fresh clone's config/ holds, what tests load, and the fallback when
# the package is installed without config/.
SHIPPED_MAPPINGS_PATH = Path(str(_PACKAGE.joinpath("naming", "shipped", "OlToPurviewMappings.json")))
# The rule file users edit (README "Add a mapping rule"); it travels with the app zip and the wheel.
USER_MAPPINGS_PATH = PROJECT_ROOT / "config" / "OlToPurviewMappings.json"
DEFAULT_MAPPINGS_PATH = USER_MAPPINGS_PATH if USER_MAPPINGS_PATH.is_file() else SHIPPED_MAPPINGS_PATH
TYPEDEFS_DIR = Path(str(_PACKAGE.joinpath("lineage", "typedefs")))  # the connector's own Atlas types

DEFAULT_TEMPORARY_DATASET_SECONDS = 24 * 3600
DEFAULT_STRIPPED_FACETS = ("spark.logicalPlan", "spark_unknown", "debug", "spark_properties_unused")


def _flag(value: str | None, default: bool) -> bool:
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


def _default_run_state_store(env: Mapping[str, str]) -> str:
    """`table` in Azure (WEBSITE_INSTANCE_ID is set on every instance there): instances of a scaled-out app must
    share run state, and the app's own folder is read-only when it runs from a package. `sqlite` elsewhere."""
    return "table" if env.get("WEBSITE_INSTANCE_ID") else Settings.run_state_store


def _default_archive_store(env: Mapping[str, str]) -> str:
    """`blob` in Azure (a container in AzureWebJobsStorage that Spark reads over abfss://), `folder` elsewhere: the
    local queue may be Azurite, which Spark cannot read, so local archives are files under the data folder."""
    return "blob" if env.get("WEBSITE_INSTANCE_ID") else Settings.archive_store


def _int(value: str | None, default: int) -> int:
    if value is None or value.strip() == "":
        return default
    return int(value)


def _float(value: str | None, default: float) -> float:
    if value is None or value.strip() == "":
        return default
    return float(value)


def _limit(env: Mapping[str, str], name: str, default: int, minimum: float = 1, kind: type = int) -> Any:
    """An integer limit (or a `kind=float` number) read from setting `name`; a clear error naming the setting when it
    is not one."""
    value = env.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        number = kind(value)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise ValueError(f"{name} must be {what}, got {value.strip()[:40]!r}") from None
    if number < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {number}")
    return number


def _list(value: str | None, default: tuple[str, ...]) -> tuple[str, ...]:
    if value is None:
        return default
    return tuple(item.strip() for item in value.split(",") if item.strip())


def _pairs(value: str | None) -> tuple[tuple[str, str], ...]:
    pairs = []
    for item in _list(value, ()):
        key, sep, val = item.partition("=")
        if not sep or not key.strip() or not val.strip():
            raise ValueError(f"expected KEY=VALUE pairs separated by commas, got {item!r}")
        pairs.append((key.strip(), val.strip()))
    return tuple(pairs)


ACCOUNT_NAME_SETTING = "AzureWebJobsStorage__accountName"
SERVICE_URI_SETTINGS = {"blob": "AzureWebJobsStorage__blobServiceUri", "queue": "AzureWebJobsStorage__queueServiceUri",
                        "table": "AzureWebJobsStorage__tableServiceUri"}
_ACCOUNT_NAME = re.compile(r"^[a-z0-9]{3,24}$")
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


@dataclass(frozen=True)
class StorageEndpoints:
    """The storage account's service URIs, for an identity-based connection (no key): what the Functions host reads
    from `AzureWebJobsStorage__accountName` or `AzureWebJobsStorage__{blob,queue,table}ServiceUri`."""
    blob: str
    queue: str
    table: str


def _service_uri(name: str, value: str) -> str:
    value = value.strip().rstrip("/")
    scheme, _, rest = value.partition("://")
    host = rest.split("/", 1)[0].rsplit(":", 1)[0] if rest else ""
    if not host or scheme not in ("https", "http") or (scheme == "http" and host not in _LOOPBACK_HOSTS):
        raise ValueError(f"{name} must be an https:// URI (http:// only on loopback), got {value[:80]!r}")
    return value


def _storage_endpoints(env: Mapping[str, str]) -> StorageEndpoints | None:
    """Identity-based storage (`AzureWebJobsStorage__*`), or None when none of those settings is set. An account
    name gives the public cloud's URIs; a service URI setting overrides its service (sovereign clouds, Azurite)."""
    account = (env.get(ACCOUNT_NAME_SETTING) or "").strip()
    given = {service: env.get(name) or "" for service, name in SERVICE_URI_SETTINGS.items()}
    if not account and not any(value.strip() for value in given.values()):
        return None
    if account and not _ACCOUNT_NAME.match(account):
        raise ValueError(f"{ACCOUNT_NAME_SETTING} must be 3 to 24 lowercase letters and digits, got {account[:40]!r}")
    uris = {}
    for service, value in given.items():
        if value.strip():
            uris[service] = _service_uri(SERVICE_URI_SETTINGS[service], value)
        elif account:
            uris[service] = f"https://{account}.{service}.core.windows.net"
        else:
            raise ValueError(f"{SERVICE_URI_SETTINGS[service]} is not set: set {ACCOUNT_NAME_SETTING}, or all three "
                             f"service URIs ({', '.join(SERVICE_URI_SETTINGS.values())})")
    return StorageEndpoints(**uris)


@dataclass(frozen=True)
class Settings:
    # --- name mapping -------------------------------------------------------------------------------------------
    mappings_inline: str | None = None  # OlToPurviewMappings: the rule list as inline JSON (the reference's app setting)
    mappings_path: Path = DEFAULT_MAPPINGS_PATH  # OL_TO_PURVIEW_MAPPINGS_PATH
    # --- ingest ------------------------------------------------------------------------------------------------
    max_body_bytes: int = 32 * 1024 * 1024  # MAX_EVENT_BYTES, after decompression
    stripped_facets: tuple[str, ...] = DEFAULT_STRIPPED_FACETS  # STRIP_FACETS (comma-separated)
    # --- intake limits on what multiplies (README "Limits"; olparser.contract.IntakeLimits) ---------------------
    max_name_chars: int = 4096  # MAX_NAME_CHARS: a namespace or name
    max_datasets_per_event: int = 1000  # MAX_DATASETS_PER_EVENT: inputs + outputs
    max_facets_per_event: int = 10_000  # MAX_FACETS_PER_EVENT: facets in all facet maps
    max_schema_columns: int = 10_000  # MAX_SCHEMA_COLUMNS: fields of one schema facet, nested ones included
    max_column_lineage_fields: int = 10_000  # MAX_COLUMN_LINEAGE_FIELDS: output fields of columnLineage, per event
    max_column_lineage_input_fields: int = 100_000  # MAX_COLUMN_LINEAGE_INPUT_FIELDS: input fields, per event
    max_mount_points: int = 2000  # MAX_MOUNT_POINTS: entries of environment-properties mountPoints
    max_gzip_members: int = 64  # MAX_GZIP_MEMBERS: gzip members in one body
    max_event_time_skew_seconds: int = 300  # MAX_EVENT_TIME_SKEW_SECONDS: later eventTimes are clamped to now + this
    # --- run merging -------------------------------------------------------------------------------------------
    run_state_store: str = "sqlite"  # RUN_STATE_STORE: sqlite | table (the default in Azure, see from_env)
    run_state_ttl_seconds: int = 7 * 24 * 3600  # RUN_STATE_TTL_SECONDS
    run_history_days: int = 400  # RUN_HISTORY_DAYS: how long the run history keeps a run (from its start)
    # TEMPORARY_DATASET_SECONDS: how long what a run wrote to a temporary dataset (inmemory://, datasetType TEMPORARY)
    # is remembered for the runs of the same parent run that read it (docs/guides/temporary-datasets-and-edges.md)
    temporary_dataset_seconds: int = DEFAULT_TEMPORARY_DATASET_SECONDS
    # STREAMING_HISTORY_WINDOW: seconds; the micro-batches of one streaming job make one history entry per window
    streaming_history_window_seconds: int = 3600
    lineage_on_failure: bool = False  # LINEAGE_ON_FAILURE: also write lineage for FAIL / ABORT runs
    dataset_identity: str = "table"  # DATASET_IDENTITY: table (symlink identifier) | storage (the location)
    # DATABRICKS_WORKSPACE_HOSTS: "<workspace id>=<host>,..." for clusters whose events carry only the workspace id
    databricks_workspace_hosts: tuple[tuple[str, str], ...] = ()
    # DATABRICKS_METASTORE_IDS: "<workspace id or host>=<Unity Catalog metastore id>,..." so that a Unity Catalog table
    # is named as Purview's Unity Catalog scan names it (databricks://{metastore id}/catalogs/...)
    databricks_metastore_ids: tuple[tuple[str, str], ...] = ()
    # --- what a run may write, and when ------------------------------------------------------------------------
    max_datasets_per_run: int = 500  # MAX_DATASETS_PER_RUN: inputs (and outputs) kept per run, in name order
    max_process_edges_per_run: int = 10_000  # MAX_PROCESS_EDGES_PER_RUN: inputs x outputs written per run
    incomplete_run_seconds: int = 3600  # INCOMPLETE_RUN_SECONDS: write runs with no terminal event after this; 0: never
    # DATABRICKS_ENVIRONMENT_WAIT_SECONDS: hold a finished Databricks run whose environment facet (notebook, mounts)
    # has not arrived yet, at most this long; 0 writes at once (and corrects when the facet comes)
    databricks_environment_wait_seconds: int = 60
    # --- column lineage from SQL (a `sql` job facet and no columnLineage facet) ----------------------------------
    sql_column_lineage: bool = True  # SQL_COLUMN_LINEAGE: derive column lineage from the run's SQL
    max_sql_chars: int = 65_536  # MAX_SQL_CHARS: longer queries are not parsed (table lineage only)
    sql_parse_timeout_seconds: float = 2.0  # SQL_PARSE_TIMEOUT_SECONDS: a parse that takes longer is abandoned
    # --- catalog target ----------------------------------------------------------------------------------------
    purview_account_name: str | None = None  # PURVIEW_ACCOUNT_NAME
    # PURVIEW_ENDPOINT: an https host instead of PURVIEW_ACCOUNT_NAME (the new portal's tenant endpoint
    # https://api.purview-service.microsoft.com or https://{tenantId}-api.purview-service.microsoft.com)
    purview_endpoint: str | None = None
    purview_api: str = "datamap"  # PURVIEW_API: datamap (GA, /datamap/api) | catalog (legacy, /catalog/api)
    atlas_endpoint: str | None = None  # ATLAS_ENDPOINT, e.g. http://127.0.0.1:21000/api/atlas/v2
    atlas_username: str | None = None  # ATLAS_USERNAME
    atlas_password: str | None = field(default=None, repr=False)  # ATLAS_PASSWORD
    # TYPE_PREFIX: prefixes the names of the connector's own types (ol_ -> ol_databricks_notebook), for catalogs where
    # someone else already defines a type of the same name differently (Purview's native databricks_notebook)
    type_prefix: str = ""
    # --- collections (docs/guides/enterprise-purview.md): placement is on when either is set -------------------------
    placement_rules_path: Path | None = None  # PLACEMENT_RULES_PATH: JSON rules naming each run's collection
    purview_collection: str | None = None  # PURVIEW_COLLECTION: the collection (name or friendly name) otherwise
    # OWNER_CONTACTS: JSON {"user:jdoe@contoso.com": "<Entra object id>", "team:data": "..."}: the job ownership
    # facet's names as Purview contacts (docs/guides/enterprise-purview.md)
    owner_contacts: dict[str, str] = field(default_factory=dict)
    catalog_timeout_seconds: float = 30.0  # CATALOG_TIMEOUT_SECONDS, per call
    catalog_max_attempts: int = 6  # CATALOG_MAX_ATTEMPTS
    catalog_bulk_size: int = 1000  # CATALOG_BULK_SIZE, entities per bulk call
    catalog_cache_seconds: int = 600  # CATALOG_CACHE_SECONDS, existence-check cache lifetime
    # --- linking to the assets Purview's scanners registered (README "What gets written") ----------------------
    resolve_scanned_assets: bool = True  # RESOLVE_SCANNED_ASSETS: link datasets to resource sets, UC and Fabric tables
    # RESOLUTION_NEGATIVE_CACHE_SECONDS: how long "not in the catalog" (and a search that found nothing) is believed
    resolution_negative_cache_seconds: int = 3600
    catalog_cache_entries: int = 100_000  # CATALOG_CACHE_ENTRIES: answers kept per cache (existence, searches)
    resolution_max_searches_per_run: int = 20  # RESOLUTION_MAX_SEARCHES_PER_RUN: discovery queries one run may make
    relink_batch_size: int = 200  # RELINK_BATCH_SIZE: interim datasets the re-link timer looks at per tick
    # --- delivery ----------------------------------------------------------------------------------------------
    storage_connection: str | None = field(default=None, repr=False)  # AzureWebJobsStorage (a connection string)
    # AzureWebJobsStorage__accountName (or __blobServiceUri, __queueServiceUri, __tableServiceUri): the same account
    # reached with the app's managed identity (DefaultAzureCredential) when no connection string is set
    storage_endpoints: StorageEndpoints | None = None
    lineage_queue: str = "lineage-events"  # LINEAGE_QUEUE
    claim_check_container: str = "lineage-events"  # CLAIM_CHECK_CONTAINER
    data_dir: Path = PROJECT_ROOT / ".data"  # OL2PURVIEW_DATA_DIR: local state (SQLite files)
    # --- event archive -----------------------------------------------------------------------------------------
    archive_events: bool = True  # ARCHIVE_EVENTS: keep every accepted event (for `ol2purview spark backfill/remap`)
    archive_store: str = "folder"  # ARCHIVE_STORE: folder ($OL2PURVIEW_DATA_DIR/archive) | blob (Azure default)
    archive_container: str = "lineage-archive"  # ARCHIVE_CONTAINER: the blob container of ARCHIVE_STORE=blob

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Settings":
        env = os.environ if env is None else env
        d = cls()
        return cls(
            mappings_inline=env.get("OlToPurviewMappings") or None,
            mappings_path=Path(env.get("OL_TO_PURVIEW_MAPPINGS_PATH") or d.mappings_path),
            max_body_bytes=_int(env.get("MAX_EVENT_BYTES"), d.max_body_bytes),
            stripped_facets=_list(env.get("STRIP_FACETS"), d.stripped_facets),
            max_name_chars=_limit(env, "MAX_NAME_CHARS", d.max_name_chars),
            max_datasets_per_event=_limit(env, "MAX_DATASETS_PER_EVENT", d.max_datasets_per_event),
            max_facets_per_event=_limit(env, "MAX_FACETS_PER_EVENT", d.max_facets_per_event),
            max_schema_columns=_limit(env, "MAX_SCHEMA_COLUMNS", d.max_schema_columns),
            max_column_lineage_fields=_limit(env, "MAX_COLUMN_LINEAGE_FIELDS", d.max_column_lineage_fields),
            max_column_lineage_input_fields=_limit(env, "MAX_COLUMN_LINEAGE_INPUT_FIELDS",
                                                   d.max_column_lineage_input_fields),
            max_mount_points=_limit(env, "MAX_MOUNT_POINTS", d.max_mount_points),
            max_gzip_members=_limit(env, "MAX_GZIP_MEMBERS", d.max_gzip_members),
            max_event_time_skew_seconds=_limit(env, "MAX_EVENT_TIME_SKEW_SECONDS", d.max_event_time_skew_seconds, 0),
            run_state_store=(env.get("RUN_STATE_STORE") or _default_run_state_store(env)).lower(),
            run_state_ttl_seconds=_int(env.get("RUN_STATE_TTL_SECONDS"), d.run_state_ttl_seconds),
            run_history_days=_limit(env, "RUN_HISTORY_DAYS", d.run_history_days),
            temporary_dataset_seconds=_limit(env, "TEMPORARY_DATASET_SECONDS", d.temporary_dataset_seconds),
            streaming_history_window_seconds=_limit(env, "STREAMING_HISTORY_WINDOW",
                                                    d.streaming_history_window_seconds),
            lineage_on_failure=_flag(env.get("LINEAGE_ON_FAILURE"), d.lineage_on_failure),
            dataset_identity=(env.get("DATASET_IDENTITY") or d.dataset_identity).lower(),
            databricks_workspace_hosts=_pairs(env.get("DATABRICKS_WORKSPACE_HOSTS")),
            databricks_metastore_ids=_pairs(env.get("DATABRICKS_METASTORE_IDS")),
            max_datasets_per_run=_limit(env, "MAX_DATASETS_PER_RUN", d.max_datasets_per_run),
            max_process_edges_per_run=_limit(env, "MAX_PROCESS_EDGES_PER_RUN", d.max_process_edges_per_run),
            incomplete_run_seconds=_limit(env, "INCOMPLETE_RUN_SECONDS", d.incomplete_run_seconds, 0),
            databricks_environment_wait_seconds=_limit(env, "DATABRICKS_ENVIRONMENT_WAIT_SECONDS",
                                                       d.databricks_environment_wait_seconds, 0),
            sql_column_lineage=_flag(env.get("SQL_COLUMN_LINEAGE"), d.sql_column_lineage),
            max_sql_chars=_limit(env, "MAX_SQL_CHARS", d.max_sql_chars),
            sql_parse_timeout_seconds=_limit(env, "SQL_PARSE_TIMEOUT_SECONDS",
                                             d.sql_parse_timeout_seconds, 0.01, float),
            purview_account_name=env.get("PURVIEW_ACCOUNT_NAME") or None,
            purview_endpoint=env.get("PURVIEW_ENDPOINT") or None,
            purview_api=(env.get("PURVIEW_API") or d.purview_api).lower(),
            atlas_endpoint=env.get("ATLAS_ENDPOINT") or None,
            atlas_username=env.get("ATLAS_USERNAME") or None,
            atlas_password=env.get("ATLAS_PASSWORD") or None,
            type_prefix=(env.get("TYPE_PREFIX") or "").strip(),
            placement_rules_path=Path(env["PLACEMENT_RULES_PATH"]) if env.get("PLACEMENT_RULES_PATH") else None,
            purview_collection=(env.get("PURVIEW_COLLECTION") or "").strip() or None,
            owner_contacts=_owner_contacts(env.get("OWNER_CONTACTS")),
            catalog_timeout_seconds=_float(env.get("CATALOG_TIMEOUT_SECONDS"), d.catalog_timeout_seconds),
            catalog_max_attempts=_int(env.get("CATALOG_MAX_ATTEMPTS"), d.catalog_max_attempts),
            catalog_bulk_size=_int(env.get("CATALOG_BULK_SIZE"), d.catalog_bulk_size),
            catalog_cache_seconds=_int(env.get("CATALOG_CACHE_SECONDS"), d.catalog_cache_seconds),
            resolve_scanned_assets=_flag(env.get("RESOLVE_SCANNED_ASSETS"), d.resolve_scanned_assets),
            resolution_negative_cache_seconds=_limit(env, "RESOLUTION_NEGATIVE_CACHE_SECONDS",
                                                     d.resolution_negative_cache_seconds, 0),
            catalog_cache_entries=_limit(env, "CATALOG_CACHE_ENTRIES", d.catalog_cache_entries),
            resolution_max_searches_per_run=_limit(env, "RESOLUTION_MAX_SEARCHES_PER_RUN",
                                                   d.resolution_max_searches_per_run, 0),
            relink_batch_size=_limit(env, "RELINK_BATCH_SIZE", d.relink_batch_size),
            storage_connection=env.get("AzureWebJobsStorage") or None,
            storage_endpoints=_storage_endpoints(env),
            lineage_queue=env.get("LINEAGE_QUEUE") or d.lineage_queue,
            claim_check_container=env.get("CLAIM_CHECK_CONTAINER") or d.claim_check_container,
            data_dir=Path(env.get("OL2PURVIEW_DATA_DIR") or d.data_dir),
            archive_events=_flag(env.get("ARCHIVE_EVENTS"), d.archive_events),
            archive_store=(env.get("ARCHIVE_STORE") or _default_archive_store(env)).lower(),
            archive_container=env.get("ARCHIVE_CONTAINER") or d.archive_container,
        )


def _owner_contacts(text: str | None) -> dict[str, str]:
    """OWNER_CONTACTS: a JSON object of ownership names to Entra object ids; a ValueError naming the setting."""
    if not text or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"OWNER_CONTACTS must be a JSON object of names to Entra object ids: {exc}") from None
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) and v
                                              for k, v in value.items()):
        raise ValueError('OWNER_CONTACTS must be a JSON object such as {"user:jdoe@contoso.com": "<object id>"}')
    return dict(value)
