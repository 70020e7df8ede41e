"""What the entity builder hands to the uploader: Atlas v2 entities for one run, as plain JSON dicts; and what the
uploader reports back (`UploadReport`, `DeleteReport`), so that the core reads typed reports."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Iterable

from olparser.jsontypes import JSON

if TYPE_CHECKING:
    from olparser.lineage.adf import AdfPipeline
    from olparser.resolution.model import Candidate, NamedDataset
    from olparser.resolution.tasks import TaskLookup

Key = tuple[str, str]  # (typeName, qualifiedName)
COLUMN_TYPE = "openlineage_column"


@dataclass(frozen=True)
class UnmatchedDataset:
    namespace: str
    name: str
    reason: str


def unmatched_text(unmatched: tuple[UnmatchedDataset, ...], shown: int = 10, longest: int = 200) -> str:
    """The datasets no rule matched, for a log line: each by namespace and name (cut to `longest` characters), the
    first `shown` of them and how many more."""

    def cut(text: str) -> str:
        return text if len(text) <= longest else text[:longest] + "..."

    names = [f"namespace={cut(u.namespace)!r} name={cut(u.name)!r}" for u in unmatched[:shown]]
    more = f"; and {len(unmatched) - shown} more" if len(unmatched) > shown else ""
    return "; ".join(names) + more


@dataclass(frozen=True)
class LineagePlan:
    """Entities to upsert for one run, dependencies first.

    `entities` are Atlas entity JSON: {"typeName", "guid" (negative placeholder, unique in the plan),
    "attributes": {...}, "relationshipAttributes": {...}}. Datasets that Purview's scanners may already own are
    listed in `external_datasets` (typeName, qualifiedName) so that the uploader can check their existence and either
    reference them or create them; everything in `entities` belongs to the connector and is always upserted.

    `datasets` are the plan's datasets as resolution needs them (their identities, to derive candidates); once the
    plan is linked (`olparser/lineage/link.py`), `interim` lists the external datasets the connector creates itself
    because no scanned asset was found: they count as connector-owned (`owned_keys`), so the run-state ledger can
    remove them when a re-link or a newer plan leaves them unused.
    """

    entities: tuple[JSON, ...] = ()
    external_datasets: tuple[JSON, ...] = ()  # full entity JSON for datasets that may already exist in the catalog
    unmatched: tuple[UnmatchedDataset, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    datasets: tuple["NamedDataset", ...] = ()
    interim: tuple[tuple[str, str], ...] = ()
    # the Data Factory pipeline that ran the run (olparser/lineage/adf.py): resolved with the datasets, referenced by
    # the processes (`adfPipeline`) only when a scanned adf_pipeline is found
    pipeline: "AdfPipeline | None" = None
    # a job run's task as the builder names it, and how resolution finds the job's existing task that stands for it
    # (olparser/resolution/tasks.py; `link_plan` writes the run under the task found)
    task: "TaskLookup | None" = None

    def resolution_extra(self) -> dict[tuple[str, str], tuple["Candidate", ...]]:
        """What resolution looks up besides the datasets: the pipeline's candidates, under its pending key."""
        return {self.pipeline.pending: self.pipeline.candidates()} if self.pipeline is not None else {}

    def process_names(self) -> tuple[str, ...]:
        """qualifiedNames of the processes in the plan (the entities that carry a run's `lastRunId`)."""
        return tuple(e["attributes"]["qualifiedName"] for e in self.entities if is_process(e))

    def owned_keys(self) -> tuple[tuple[str, str], ...]:
        """(typeName, qualifiedName) of the connector-owned entities a run answers for: everything in `entities`
        but the columns, which belong to their dataset (deleting a dataset deletes its columns), and the interim
        external datasets it creates."""
        return tuple(
            sorted(
                {
                    (e["typeName"], e["attributes"]["qualifiedName"])
                    for e in self.entities
                    if e["typeName"] != COLUMN_TYPE
                }
                | set(self.interim)
            )
        )

    def without_processes(self, qualified_names: set[str]) -> "LineagePlan":
        """The same plan minus the named processes (owners and datasets stay)."""
        kept = tuple(
            e for e in self.entities if not (is_process(e) and e["attributes"]["qualifiedName"] in qualified_names)
        )
        return replace(self, entities=kept)


def is_process(entity: JSON) -> bool:
    """Processes are the entities that carry a run (`lastRunId`)."""
    return "lastRunId" in entity.get("attributes", {})


@dataclass(frozen=True)
class UploadReport:
    """What one upload did. Entities are (typeName, qualifiedName) pairs; `calls` counts HTTP requests (retries
    included); `guid_assignments` maps the plan's placeholders to the catalog's guids."""

    calls: int = 0
    created: tuple[Key, ...] = ()
    updated: tuple[Key, ...] = ()
    referenced: tuple[Key, ...] = ()
    guid_assignments: dict[str, str] = field(default_factory=dict)

    def counts(self, sent: Iterable[Key]) -> str:
        """`N entities: C created, U updated, K unchanged, R referenced` for the entities `sent`, each counted once
        (an entity the catalog created or updated that was not sent, such as a column, adds to N), so the parts
        always add up to the whole."""
        written = set(sent) | set(self.created) | set(self.updated)
        created, updated = set(self.created), set(self.updated) - set(self.created)
        return (
            f"{len(written)} entities: {len(created)} created, {len(updated)} updated, "
            f"{len(written - created - updated)} unchanged, {len(set(self.referenced))} referenced"
        )


@dataclass(frozen=True)
class DeleteReport:
    """What one delete did: `deleted` the keys found and deleted (columns of deleted datasets not listed, but
    counted in `entities`), `kept` those found and kept (see `CatalogUploader.delete`), `calls` HTTP requests
    (retries included)."""

    calls: int = 0
    deleted: tuple[Key, ...] = ()
    entities: int = 0
    kept: tuple[Key, ...] = ()  # found but kept: still used by another process, or a scan's now
