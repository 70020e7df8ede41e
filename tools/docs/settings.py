"""docs/reference/settings.md, generated: every setting the code reads, with its default taken from
`olparser.settings.Settings` (the comment next to each field names its setting) and its meaning from the table below.

`settings_read()` records what `Settings.from_env` and function_app.py read; a setting read there and missing below
makes the page's test fail naming it, so a new setting cannot be forgotten in the documentation.
"""

from __future__ import annotations

import ast
import re
from dataclasses import MISSING, dataclass, fields
from typing import Any

from olparser.settings import PROJECT_ROOT, Settings

FROM_SETTINGS = None  # a row's default: the one `Settings` declares


@dataclass(frozen=True)
class Setting:
    names: tuple[str, ...]
    default: str | None  # FROM_SETTINGS, or the text to show (a default that depends on where it runs)
    meaning: str


# Read by the local tools, not by Settings: the keys `serve` and the catalog would otherwise take on the command line.
LOCAL_ONLY = {"OL2PURVIEW_FUNCTION_KEY", "OL2PURVIEW_MASTER_KEY", "OL2PURVIEW_CATALOG_PASSWORD"}
# Read to choose a default (the platform sets it), never set by a user.
PLATFORM = {"WEBSITE_INSTANCE_ID"}

SETTINGS: tuple[Setting, ...] = (
    Setting(
        ('AzureWebJobsStorage',),
        '(set by `serve`)',
        'the storage account for the lineage queue, its poison queue, claim-check blobs and, with `RUN_STATE_STORE=table`, run state. `UseDevelopmentStorage=true` = Azurite on its default ports',
    ),
    Setting(
        (
            'AzureWebJobsStorage__accountName',
            'AzureWebJobsStorage__blobServiceUri',
            'AzureWebJobsStorage__queueServiceUri',
            'AzureWebJobsStorage__tableServiceUri',
        ),
        '— (set by the template)',
        "the same storage account without a key, as the Functions host reads it: the app's managed identity (`DefaultAzureCredential`; `AZURE_CLIENT_ID` picks a user-assigned one) with the service URIs given, or derived from the account name (`https://{name}.{service}.core.windows.net`). Used when `AzureWebJobsStorage` is not set",
    ),
    Setting(
        ('PURVIEW_ACCOUNT_NAME',),
        FROM_SETTINGS,
        'write to this Purview account (Entra ID via `DefaultAzureCredential`; the identity needs Data Curator)',
    ),
    Setting(
        ('PURVIEW_API',),
        FROM_SETTINGS,
        '`datamap`: `https://{account}.purview.azure.com/datamap/api/atlas/v2` (GA, `api-version=2023-09-01`); `catalog`: the legacy `/catalog/api/atlas/v2`',
    ),
    Setting(
        ('PURVIEW_ENDPOINT',),
        FROM_SETTINGS,
        'an https host instead of `PURVIEW_ACCOUNT_NAME` (the new portal\'s tenant endpoint `https://api.purview-service.microsoft.com` or `https://{tenantId}-api.purview-service.microsoft.com`); the Data Map paths and `api-version` are appended, token scope `https://purview.azure.net/.default` (see [A shared Purview estate](../guides/enterprise-purview.md))',
    ),
    Setting(
        ('TYPE_PREFIX',),
        FROM_SETTINGS,
        'prefixes the names of the connector\'s own types in the catalog (`ol_` gives `ol_databricks_notebook`), to coexist with same-named types it did not create',
    ),
    Setting(
        ('PLACEMENT_RULES_PATH',),
        FROM_SETTINGS,
        'JSON placement rules naming the collection of each run (by job namespace, workspace or output qualifiedName prefix; `qn-tester lint --placement`)',
    ),
    Setting(
        ('PURVIEW_COLLECTION',),
        FROM_SETTINGS,
        'the collection (name or friendly name) for runs no placement rule or scanned output places; none: the root collection',
    ),
    Setting(
        ('OWNER_CONTACTS',),
        FROM_SETTINGS,
        'JSON object of OpenLineage ownership names to Entra object ids, written as `contacts` on the processes and owners the connector creates',
    ),
    Setting(
        ('ATLAS_ENDPOINT', 'ATLAS_USERNAME', 'ATLAS_PASSWORD'),
        '—',
        'write to any other Atlas v2 endpoint, with basic auth. Neither this nor `PURVIEW_ACCOUNT_NAME`: the embedded catalog (local runs only)',
    ),
    Setting(('CATALOG_TIMEOUT_SECONDS',), FROM_SETTINGS, 'timeout of each catalog call'),
    Setting(
        ('CATALOG_MAX_ATTEMPTS',),
        FROM_SETTINGS,
        'attempts per call on 408, 429, 5xx and connection errors, with exponential backoff and jitter; `Retry-After` honoured',
    ),
    Setting(('CATALOG_BULK_SIZE',), FROM_SETTINGS, 'entities per bulk call (Purview fails above about 4,000)'),
    Setting(
        ('CATALOG_CACHE_SECONDS',),
        FROM_SETTINGS,
        'how long a dataset seen in the catalog is trusted without a new lookup',
    ),
    Setting(
        ('CATALOG_CACHE_ENTRIES',),
        FROM_SETTINGS,
        'answers kept per cache (existence, ownership, searches); the oldest go first',
    ),
    Setting(
        ('RESOLVE_SCANNED_ASSETS',),
        FROM_SETTINGS,
        'link datasets to the assets Purview\'s scanners registered (resource sets, Unity Catalog and Fabric tables; see "What gets written"); `false` writes every dataset under its rule identity as before',
    ),
    Setting(
        ('RESOLUTION_NEGATIVE_CACHE_SECONDS',),
        FROM_SETTINGS,
        'how long "not in the catalog" (and a search that found nothing) is believed by the runs of this instance (0: not cached); the re-link timer looks again regardless, and a run that names an interim entity the timer replaced resolves again at once',
    ),
    Setting(
        ('RESOLUTION_MAX_SEARCHES_PER_RUN',),
        FROM_SETTINGS,
        'discovery queries one run may make (those beyond wait for later runs and the re-link timer; a backfill is bounded by its call rate instead)',
    ),
    Setting(
        ('RELINK_BATCH_SIZE',),
        FROM_SETTINGS,
        'interim datasets the re-link timer resolves again per tick, the longest unchecked first',
    ),
    Setting(('RELINK_TIMER_SCHEDULE',), '`0 */10 * * * *`', 'NCRONTAB (seconds first) of the re-link timer'),
    Setting(('OlToPurviewMappings',), FROM_SETTINGS, 'the mapping rules as inline JSON (wins over the file)'),
    Setting(
        ('OL_TO_PURVIEW_MAPPINGS_PATH',),
        '`config/OlToPurviewMappings.json` beside olparser/ (a checkout, the deployment zip); in an installed wheel, the copy of it the build packaged (`olparser/naming/shipped`)',
        'the mapping rules file; re-read when it changes (checked at most every 2 s; an invalid file keeps the previous rules)',
    ),
    Setting(
        ('DATASET_IDENTITY',),
        FROM_SETTINGS,
        '`table` or `storage`: how a dataset with a `symlinks` table identifier is represented',
    ),
    Setting(
        ('DATABRICKS_WORKSPACE_HOSTS',),
        FROM_SETTINGS,
        '`<workspace id>=<host>,...` for clusters whose events carry only the workspace id',
    ),
    Setting(
        ('DATABRICKS_METASTORE_IDS',),
        FROM_SETTINGS,
        "`<workspace id or host>=<metastore id>,...`: the Unity Catalog metastore of each workspace, so that a Unity Catalog table is named as Purview's Unity Catalog scan names it (`databricks://{metastore id}/catalogs/...`)",
    ),
    Setting(('LINEAGE_ON_FAILURE',), FROM_SETTINGS, 'also write lineage for FAIL and ABORT runs'),
    Setting(
        ('RUN_STATE_STORE',),
        '`table` in Azure, else `sqlite`',
        '`table` (Azure Table `olrunstate` in AzureWebJobsStorage, shared by every instance of a scaled-out app; chosen when `WEBSITE_INSTANCE_ID` is set) or `sqlite` (one machine: `$OL2PURVIEW_DATA_DIR/run-state.sqlite3`)',
    ),
    Setting(
        ('RUN_STATE_TTL_SECONDS',),
        FROM_SETTINGS,
        "a run's merged state expires this long after its last event; so does what the store remembers of a dataset's newest drop, rename and write (see [Dropped and renamed tables](../guides/job-identity.md#dropped-and-renamed-tables))",
    ),
    Setting(
        ('RUN_HISTORY_DAYS',),
        FROM_SETTINGS,
        'how long the [run history](../guides/history.md) keeps a run (from its start); older runs are not recorded and are purged by the timer. The history is stored with the run state (`RUN_STATE_STORE`: SQLite, or the table `olrunhistory`)',
    ),
    Setting(
        ('TEMPORARY_DATASET_SECONDS',),
        FROM_SETTINGS,
        'how long what a run wrote to a temporary dataset (`inmemory://`, `datasetType` TEMPORARY) is remembered for the runs of the same parent run that read it (see [Temporary datasets and process inputs](../guides/temporary-datasets-and-edges.md)), and how long a Spark application run\'s Airflow task is remembered for its SQL jobs after the application\'s last event (see [Job identity](../guides/job-identity.md))',
    ),
    Setting(
        ('STREAMING_HISTORY_WINDOW',),
        FROM_SETTINGS,
        'seconds: the micro-batches of one streaming job make one run-history entry per window (see [Job identity](../guides/job-identity.md))',
    ),
    Setting(
        ('INCOMPLETE_RUN_SECONDS',),
        FROM_SETTINGS,
        'a run with datasets but no terminal event is written (`INCOMPLETE`) this long after its last event; 0: never',
    ),
    Setting(
        ('DATABRICKS_ENVIRONMENT_WAIT_SECONDS',),
        FROM_SETTINGS,
        'how long a finished Databricks run waits for its environment facet before it is written anyway; 0: write at once and correct later',
    ),
    Setting(
        ('LINEAGE_TIMER_SCHEDULE',),
        '`0 */1 * * * *`',
        'NCRONTAB (seconds first) of the timer that writes incomplete and held runs, retries failed deletions and purges expired run state',
    ),
    Setting(
        ('MAX_DATASETS_PER_RUN', 'MAX_PROCESS_EDGES_PER_RUN'),
        FROM_SETTINGS,
        'what one run may write, see [Limits](limits.md)',
    ),
    Setting(('MAX_EVENT_BYTES',), FROM_SETTINGS, 'largest accepted body after decompression'),
    Setting(('STRIP_FACETS',), FROM_SETTINGS, 'heavy facets removed on intake, comma-separated'),
    Setting(
        (
            'MAX_NAME_CHARS',
            'MAX_DATASETS_PER_EVENT',
            'MAX_FACETS_PER_EVENT',
            'MAX_SCHEMA_COLUMNS',
            'MAX_COLUMN_LINEAGE_FIELDS',
            'MAX_COLUMN_LINEAGE_INPUT_FIELDS',
            'MAX_MOUNT_POINTS',
            'MAX_GZIP_MEMBERS',
            'MAX_EVENT_TIME_SKEW_SECONDS',
        ),
        FROM_SETTINGS,
        'what one event may contain (see [Limits](limits.md)); a value that is not a positive integer (0 allowed for the skew) is an error naming the setting when the app reads its settings',
    ),
    Setting(
        ('LINEAGE_QUEUE',),
        FROM_SETTINGS,
        "the queue name used by the tools (the function's bindings use `lineage-events`)",
    ),
    Setting(('CLAIM_CHECK_CONTAINER',), FROM_SETTINGS, 'blob container for events too large for a queue message'),
    Setting(
        ('OL2PURVIEW_DATA_DIR',),
        '`.data` in the working directory',
        'local state: SQLite files, embedded queues, catalog',
    ),
    Setting(
        ('OL2PURVIEW_FUNCTION_KEY',),
        '—',
        "`ol2purview serve`'s function key, so that it need not appear in `ps` (default: the key kept in `.data/host-keys.json`)",
    ),
    Setting(
        ('OL2PURVIEW_MASTER_KEY',),
        '—',
        "`ol2purview serve`'s master key (default: the one kept in `.data/host-keys.json`)",
    ),
    Setting(
        ('OL2PURVIEW_CATALOG_PASSWORD',),
        '—',
        "`ol2purview catalog --user U`'s basic-auth password, so that it need not appear in `ps`",
    ),
    Setting(
        ('ARCHIVE_EVENTS',),
        FROM_SETTINGS,
        'keep every accepted event in the archive (for `ol2purview spark backfill` and `remap`)',
    ),
    Setting(
        ('ARCHIVE_STORE',),
        '`blob` in Azure, else `folder`',
        '`blob` (container `ARCHIVE_CONTAINER` in AzureWebJobsStorage; chosen when `WEBSITE_INSTANCE_ID` is set) or `folder` (`$OL2PURVIEW_DATA_DIR/archive`)',
    ),
    Setting(('ARCHIVE_CONTAINER',), FROM_SETTINGS, "the archive's blob container"),
    Setting(
        ('SQL_COLUMN_LINEAGE',),
        FROM_SETTINGS,
        "derive column lineage from a run's `sql` job facet when an output has no `columnLineage` (see [Column lineage from SQL](../guides/column-lineage-from-sql.md))",
    ),
    Setting(
        ('MAX_SQL_CHARS',),
        FROM_SETTINGS,
        'a longer query is not parsed: its run is written without derived columns, and one line is logged',
    ),
    Setting(
        ('SQL_PARSE_TIMEOUT_SECONDS',),
        FROM_SETTINGS,
        'a parse that takes longer is abandoned (its worker process killed): table lineage only, one line logged',
    ),
)


class _RecordingEnv(dict[str, str]):
    """An empty environment that remembers every name read from it."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[str] = []

    def get(self, key: Any, default: Any = None) -> Any:
        self.read.append(str(key))
        return default

    def __contains__(self, key: object) -> bool:
        self.read.append(str(key))
        return False


def settings_read() -> set[str]:
    """What `Settings.from_env` reads, and what function_app.py reads from os.environ at import."""
    env = _RecordingEnv()
    Settings.from_env(env)
    names = set(env.read)
    tree = ast.parse((PROJECT_ROOT / "function_app.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) in ("os.environ.get", "os.getenv")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.add(str(node.args[0].value))
    return names - PLATFORM


def field_defaults() -> dict[str, Any]:
    """Setting name -> the default of the `Settings` field that `Settings.from_env` fills from it."""
    tree = ast.parse((PROJECT_ROOT / "olparser" / "settings.py").read_text(encoding="utf-8"))
    from_env = next(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == "from_env")
    defaults = {
        f.name: f.default if f.default is not MISSING else f.default_factory()  # type: ignore[operator]  # MISSING default: a factory
        for f in fields(Settings)
    }
    named: dict[str, Any] = {}
    for call in ast.walk(from_env):
        if isinstance(call, ast.Call) and ast.unparse(call.func) == "cls":
            for keyword in call.keywords:
                for node in ast.walk(keyword.value):
                    if (
                        isinstance(node, ast.Constant)
                        and isinstance(node.value, str)
                        and re.fullmatch(
                            r"[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)+|OlToPurviewMappings|AzureWebJobsStorage", node.value
                        )
                    ):
                        named.setdefault(node.value, defaults[keyword.arg])  # type: ignore[index]  # from_env's calls name each keyword (no **)
    return named


def shown(value: Any) -> str:
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, tuple) and value:
        return "`" + ",".join(value) + "`"
    if value is None or value == ():
        return "—"
    return f"`{value}`"


def page() -> str:
    defaults = field_defaults()
    rows = []
    for setting in SETTINGS:
        default = setting.default
        if default is FROM_SETTINGS:
            default = ", ".join(shown(defaults[name]) for name in setting.names)
        names = ", ".join(f"`{n}`" for n in setting.names)
        rows.append(f"| {names} | {default} | {setting.meaning} |")
    return "\n".join(
        [
            "# Settings",
            "",
            "<!-- generated by `make docs-reference` (tools/docs/settings.py) from olparser/settings.py: edit those, "
            "not this page -->",
            "",
            "App settings in Azure, environment variables locally. Defaults are the code's (`olparser/settings.py`).",
            "",
            "| setting | default | meaning |",
            "|---|---|---|",
            *rows,
            "",
        ]
    )


def undocumented() -> list[str]:
    documented = {n for s in SETTINGS for n in s.names}
    return sorted(settings_read() - documented)


def unknown() -> list[str]:
    documented = {n for s in SETTINGS for n in s.names}
    return sorted(documented - settings_read() - LOCAL_ONLY)
