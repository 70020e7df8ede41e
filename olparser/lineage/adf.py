"""The Azure Data Factory pipeline that ran a run (issue 35), recognised from its ParentRunFacet. Pure: plain data in,
resolution candidates out; the catalog resolver (olparser/adapters/catalog/resolver.py) says which scanned
`adf_pipeline` they are, and `link.link_plan` makes the processes reference it (`adfPipeline`).

Data Factory emits no OpenLineage: the convention (docs/guides/job-identity.md) is that the Databricks activity hands
openlineage-spark the pipeline run as its parent, from ADF system variables:

    spark.openlineage.parentJobNamespace  adf://@{pipeline().DataFactory}
    spark.openlineage.parentJobName       @{pipeline().Pipeline}
    spark.openlineage.parentRunId         @{pipeline().RunId}

openlineage-spark makes that the application run's parent, and the root of every SQL job's run (no `rootParentJob*`:
`SparkSQLExecutionContext.buildApplicationParentFacet` falls back to the `parentJob*` settings). So the parent, else the
root, of a run names the pipeline when its job namespace is `adf://{factory}` or `azuredatafactory://{factory}` (the
scheme in any case), or the factory's ARM id `/subscriptions/{sub}/resourceGroups/{rg}/providers/
Microsoft.DataFactory/factories/{factory}`, its job name the pipeline's name, its run id a GUID.

Purview's Data Factory connection registers the pipeline as `adf_pipeline`
`/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.DataFactory/factories/{factory}/pipelines/{pipeline}`:
with the ARM id the qualifiedName is known (an exact candidate, then a case-insensitive search in case the id was typed
in another case); with the factory's name only, a search for an `adf_pipeline` of that name whose qualifiedName ends
with `/factories/{factory}/pipelines/{pipeline}` (in any case), taken only when exactly one matches. The connector never
writes an `adf_pipeline`: no asset found, no reference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from olparser.resolution.model import SEGMENT, TEXT, Candidate, Key, Search, Shape

from .identity import JobRef, Orchestration

ADF_PIPELINE = "adf_pipeline"  # Microsoft's type (the Data Factory connection's), never written by the connector
PIPELINE_ATTRIBUTE = "adfPipeline"  # typedefs spark.json, databricks.json: adf_pipeline_*_processes
PENDING_TYPE = "ol2purview:adf_pipeline"  # the key a pipeline is resolved under: no entity has this type

_SCHEME = re.compile(r"(?i)(?:adf|azuredatafactory)://([^/?#\s]+)/?")
_ARM = re.compile(
    r"(?i)/subscriptions/([^/\s]+)/resourceGroups/([^/\s]+)/providers/Microsoft\.DataFactory/factories/([^/\s]+)/?"
)
_GUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_FACTORIES = "/providers/Microsoft.DataFactory/factories/"


@dataclass(frozen=True)
class AdfPipeline:
    """A Data Factory pipeline a run names: its factory, its name, and the factory's ARM id parts when sent."""

    factory: str
    pipeline: str
    subscription: str | None = None
    resource_group: str | None = None

    @property
    def pending(self) -> Key:
        """The key the plan resolves the pipeline under (`PENDING_TYPE`, never written)."""
        return PENDING_TYPE, f"adf://{self.factory}/pipelines/{self.pipeline}".lower()

    def candidates(self) -> tuple[Candidate, ...]:
        """The scanned assets it may be: the exact qualifiedName when the ARM id is known, then a search."""
        tail = f"{_FACTORIES}{self.factory}/pipelines/{self.pipeline}"
        shape: Shape
        if self.subscription is not None and self.resource_group is not None:
            head = f"/subscriptions/{self.subscription}/resourceGroups/{self.resource_group}"
            exact = Candidate(ADF_PIPELINE, head + tail, "adf-arm-id")
            shape = ((TEXT, head + tail),)
            return exact, Candidate(
                ADF_PIPELINE, head + tail, "adf-search", Search(ADF_PIPELINE, self.pipeline, shape, (), True)
            )
        shape = ((TEXT, "/subscriptions/"), (SEGMENT, ""), (TEXT, "/resourceGroups/"), (SEGMENT, ""), (TEXT, tail))
        shown = "/subscriptions/{*}/resourceGroups/{*}" + tail
        return (Candidate(ADF_PIPELINE, shown, "adf-search", Search(ADF_PIPELINE, self.pipeline, shape, (), True)),)


def adf_pipeline(orchestration: Orchestration) -> AdfPipeline | None:
    """The pipeline the run's parent names, else its root's (see the module docstring); None when neither does."""
    for ref in (orchestration.parent, orchestration.root):
        found = _pipeline(ref)
        if found is not None:
            return found
    return None


def _pipeline(ref: JobRef | None) -> AdfPipeline | None:
    if ref is None or not _GUID.fullmatch(ref.run_id or ""):
        return None
    name = ref.name
    if not name or name != name.strip() or "/" in name:
        return None
    namespace = ref.namespace.strip()
    scheme = _SCHEME.fullmatch(namespace)
    if scheme is not None:
        return AdfPipeline(scheme.group(1), name)
    arm = _ARM.fullmatch(namespace)
    if arm is not None:
        return AdfPipeline(arm.group(3), name, arm.group(1), arm.group(2))
    return None
