"""How the entity builder represents datasets and which runs it writes: plain options, read once from Settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

DATASET_IDENTITIES = ("table", "storage")


@dataclass(frozen=True)
class LineageOptions:
    """Options of `build_lineage`.

    dataset_identity: "table" represents a dataset that carries a `symlinks` TABLE identifier (Hive metastore or
        Unity Catalog table) by that table, "storage" by its storage location.
    lineage_on_failure: also write lineage for FAIL and ABORT runs.
    workspace_hosts: Databricks workspace id (`clusterOwnerOrgId`) -> workspace host, for events that carry the id
        but no host (the id alone does not tell the region shard of `adb-<id>.<shard>.azuredatabricks.net`).
    max_process_edges: at most this many inputs × outputs per run (MAX_PROCESS_EDGES_PER_RUN).
    workspace_metastores: Databricks workspace id or host -> Unity Catalog metastore id (DATABRICKS_METASTORE_IDS), to
        name a Unity Catalog table as Purview's Unity Catalog scan does.
    streaming_history_window: seconds; the micro-batches of a streaming job make one run-history entry per window
        (olparser/history/records.py).
    """

    dataset_identity: str = "table"
    lineage_on_failure: bool = False
    workspace_hosts: tuple[tuple[str, str], ...] = ()
    max_process_edges: int = 10_000
    workspace_metastores: tuple[tuple[str, str], ...] = ()
    owner_contacts: tuple[tuple[str, str], ...] = ()  # OWNER_CONTACTS: ownership name -> Entra object id
    streaming_history_window: float = 3600.0  # STREAMING_HISTORY_WINDOW: one history entry per window of a stream

    def __post_init__(self) -> None:
        if self.dataset_identity not in DATASET_IDENTITIES:
            raise ValueError(
                f"dataset_identity must be one of {', '.join(DATASET_IDENTITIES)}: got {self.dataset_identity!r}"
            )

    @classmethod
    def from_settings(cls, settings: Any) -> "LineageOptions":
        """Options from olparser.settings.Settings. `databricks_workspace_hosts` (id -> host, as a mapping or as
        pairs) is read when Settings has it (proposed setting DATABRICKS_WORKSPACE_HOSTS="id=host,...")."""
        hosts = getattr(settings, "databricks_workspace_hosts", None) or ()
        pairs = hosts.items() if isinstance(hosts, Mapping) else hosts
        return cls(
            dataset_identity=settings.dataset_identity,
            lineage_on_failure=settings.lineage_on_failure,
            workspace_hosts=tuple(sorted((str(k), str(v)) for k, v in pairs)),
            max_process_edges=settings.max_process_edges_per_run,
            workspace_metastores=tuple(
                sorted(
                    (str(k).strip().lower(), str(v).strip().lower())
                    for k, v in (getattr(settings, "databricks_metastore_ids", None) or ())
                )
            ),
            owner_contacts=tuple(sorted((getattr(settings, "owner_contacts", None) or {}).items())),
            streaming_history_window=float(getattr(settings, "streaming_history_window_seconds", 3600)),
        )

    def workspace_host_for(self, workspace_id: str) -> str | None:
        return dict(self.workspace_hosts).get(workspace_id)

    def metastore_for(self, *workspace: str | None) -> str | None:
        """The Unity Catalog metastore id of a workspace, looked up by any of its names (id, host), or None."""
        known = dict(self.workspace_metastores)
        for name in workspace:
            if name and (found := known.get(name.strip().lower())):
                return found
        return None
