"""A run's job identity: which piece of code it is, the same across the sessions that run it. Pure; the live path,
the Spark paths (through `run_context`) and the run history (through the plan's processes) all take it from here.

openlineage-spark names a SQL job `{application job}.{action}.{table}`, the application job being the normalised
Spark application name. That name is stable on a cluster (Databricks `databricks_shell`, a `spark-submit` app name),
but notebook services put the session in it:

- **Microsoft Fabric**: `{notebook}_{session guid, dashes as underscores}` (openlineage-spark 1.26 in Fabric
  Runtime 1.3: DataHub's fixture `fabric_runtime_notebook_events.jsonl`, `FabricNotebookRun.java`). The run facet
  `spark_properties` names the notebook item: `trident.artifact.id` (its guid), `trident.artifact.name`,
  `trident.workspace.id`, `spark.synapse.context.notebookname`;
- **Azure Synapse**: `{notebook}_{spark pool}_{epoch seconds}` (the Livy session name, job namespaces containing
  `azuresynapsespark`), the notebook in `spark.synapse.context.notebookname` when captured.

Every session would make a new owner and new processes. The stable identity keys the application on the notebook
(`notebooks/{artifact id}` in Fabric, `notebooks/{notebook name}` in Synapse), shows the notebook's display name,
and strips the session prefix from the job name. `legacy_app_key` is the session-specific key earlier versions
wrote: the runner finds the processes written under it through the run history and has their runs write again
(`olparser/pipeline/takeover.py`), so that the ledger replaces them as a re-map does.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, NamedTuple

FABRIC_ARTIFACT_ID = "trident.artifact.id"
FABRIC_ARTIFACT_NAME = "trident.artifact.name"
FABRIC_WORKSPACE_ID = "trident.workspace.id"
SYNAPSE_NOTEBOOK_NAME = "spark.synapse.context.notebookname"
SYNAPSE_NAMESPACE_MARK = "azuresynapsespark"
NOTEBOOKS_PREFIX = "notebooks/"

_GUID = r"[0-9a-f]{8}[_-][0-9a-f]{4}[_-][0-9a-f]{4}[_-][0-9a-f]{4}[_-][0-9a-f]{12}"
_FABRIC_SESSION = re.compile(rf"^(?P<notebook>.+?)_{_GUID}$", re.IGNORECASE)
_SYNAPSE_SESSION = re.compile(r"^(?P<notebook>.+?)_(?P<pool>[a-z0-9]+)_(?P<epoch>\d{9,})$", re.IGNORECASE)


@dataclass(frozen=True)
class JobIdentity:
    """`app_key`: the application (owner) key, stable across sessions; `app_display_name`: what users see for it
    (None: the caller's default); `job_name`: the run's job without the application prefix; `legacy_app_key`: the
    session-specific key written before, when it differs from `app_key` (else None); `service`: fabric | synapse
    | None."""

    app_key: str
    app_display_name: str | None
    job_name: str
    legacy_app_key: str | None = None
    service: str | None = None

    @property
    def notebook(self) -> str | None:
        return self.app_display_name if self.service else None


def session_application(job_name: str, run_facets: Mapping[str, Any]) -> str:
    """The application job a run belongs to as the producer names it: the parent run's job (SQL runs), else the
    first part of the run's own job name."""
    parent = run_facets.get("parent")
    parent_job = parent.get("job") if isinstance(parent, dict) else None
    parent_name = parent_job.get("name") if isinstance(parent_job, dict) else None
    if isinstance(parent_name, str) and parent_name:
        return parent_name
    return job_name.split(".", 1)[0]


_NO_PROPERTIES: Mapping[str, Any] = {}


def spark_properties(run_facets: Mapping[str, Any]) -> Mapping[str, Any]:
    facet = run_facets.get("spark_properties")
    properties = facet.get("properties") if isinstance(facet, dict) else None
    return properties if isinstance(properties, dict) else {}


def job_identity(job_namespace: str, job_name: str, run_facets: Mapping[str, Any]) -> JobIdentity:
    """The run's job identity from its job and facets (see the module text)."""
    session = session_application(job_name, run_facets)
    properties = spark_properties(run_facets) if "spark_properties" in run_facets else _NO_PROPERTIES
    if not properties and SYNAPSE_NAMESPACE_MARK not in job_namespace.lower():  # most runs: no notebook service
        return JobIdentity(session, None, strip_application(job_name, session))
    artifact_id = _text(properties.get(FABRIC_ARTIFACT_ID))
    notebook_name = _text(properties.get(FABRIC_ARTIFACT_NAME)) or _text(properties.get(SYNAPSE_NOTEBOOK_NAME))
    if artifact_id:
        notebook = notebook_name or _stripped(session, _FABRIC_SESSION) or session
        return _notebook_identity(NOTEBOOKS_PREFIX + artifact_id.lower(), notebook, job_name, session, "fabric")
    synapse = SYNAPSE_NAMESPACE_MARK in job_namespace.lower() or _text(properties.get(SYNAPSE_NOTEBOOK_NAME))
    stripped = _stripped(session, _SYNAPSE_SESSION) if synapse else None
    if synapse and (notebook_name or stripped):
        notebook = notebook_name or stripped or session
        return _notebook_identity(NOTEBOOKS_PREFIX + notebook, notebook, job_name, session, "synapse")
    return JobIdentity(session, None, strip_application(job_name, session))


def is_session_of(legacy_app_key: str, identity: JobIdentity) -> bool:
    """Whether `legacy_app_key` (an application key written by an earlier version) is a session of the notebook
    `identity` names: its session part stripped, it is the notebook's (normalised) name."""
    if not identity.service or legacy_app_key == identity.app_key:
        return False
    pattern = _FABRIC_SESSION if identity.service == "fabric" else _SYNAPSE_SESSION
    stripped = _stripped(legacy_app_key, pattern)
    return stripped is not None and _normalised(stripped) == _normalised(identity.app_display_name or "")


def strip_application(job_name: str, app_key: str) -> str:
    """The job name without its application prefix `{app_key}.` (unchanged when it has none)."""
    prefix = f"{app_key}."
    if app_key and job_name.startswith(prefix) and len(job_name) > len(prefix):
        return job_name[len(prefix) :]
    return job_name


def _notebook_identity(app_key: str, notebook: str, job_name: str, session: str, service: str) -> JobIdentity:
    job = notebook if job_name == session else strip_application(job_name, session)
    return JobIdentity(app_key, notebook, job, legacy_app_key=session if session != app_key else None, service=service)


def _stripped(name: str, pattern: re.Pattern[str]) -> str | None:
    match = pattern.match(name)
    return match.group("notebook") if match else None


def _normalised(name: str) -> str:
    """A notebook name as openlineage-spark writes it into the application job name (`NameNormalizer.normalize`,
    integration/spark/shared/.../api/naming/NameNormalizer.java): ends trimmed, accents dropped, camelCase and
    acronyms split, lower case, runs of anything but letters and digits as one `_` (`Notebook 1` -> `notebook_1`,
    `nbBronzeToSilver` -> `nb_bronze_to_silver`)."""
    trimmed = re.sub(r"[^\w]+$", "", re.sub(r"^[^\w]+", "", name))
    plain = "".join(c for c in unicodedata.normalize("NFKD", trimmed) if not unicodedata.combining(c))
    words = re.sub(
        r"(\d)([A-Z])", r"\1 \2", re.sub(r"(?<!^)([A-Z])([a-z])", r" \1\2", re.sub(r"([a-z])([A-Z])", r"\1 \2", plain))
    )
    return re.sub(r"[^a-zA-Z0-9]+", "_", words.lower())


def _text(value: Any) -> str | None:
    if value.__class__ is str:  # most values: the same as below, sooner
        return value.strip() or None
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    return text or None


def legacy_writers(
    process: str, owner: str, job_namespace: str, identity: JobIdentity, writes: Iterable[tuple[str, str]]
) -> list[str]:
    """The runs whose process is `process` written under a session-specific owner: of `writes` — (process
    qualifiedName, run id) of the runs that wrote the same output, as the run history holds them — those whose
    process is `spark://{job namespace}/{session}/processes/{same job}/{same output}` for a session of the notebook
    `identity` names (`owner` is the stable owner's qualifiedName, `{owner}/processes/...` the stable process)."""
    head = f"{owner}/processes/"
    if not identity.service or not process.startswith(head):
        return []
    tail = "/processes/" + process[len(head) :]
    prefix = f"spark://{job_namespace}/"
    found: dict[str, None] = {}
    for name, run_id in writes:
        if name != process and name.startswith(prefix) and name.endswith(tail):
            session = name[len(prefix) : len(name) - len(tail)]
            if "/" not in session and is_session_of(session, identity):
                found[run_id] = None
    return list(found)


# --- who ran it: the parent and root runs ----------------------------------------------------------------------------


class JobRef(NamedTuple):
    """A run of a job, as a ParentRunFacet names it (a named tuple: built for every run, kept cheap)."""

    namespace: str
    name: str
    run_id: str

    @property
    def job(self) -> str:
        return f"{self.namespace}/{self.name}"


class Orchestration(NamedTuple):
    """The run's `parent` and `root` (ParentRunFacet 1-1-0: `{run: {runId}, job: {namespace, name}}`; 1-2-0 adds
    `root` with the same shape), as sent, and `run_by`: the nearest orchestrator — the parent, else the root, that
    is not the run's own Spark application (openlineage-spark names the application as the parent of every SQL job, and as
    the root too when nothing ran it: `SparkSQLExecutionContext.buildApplicationParentFacet`)."""

    parent: JobRef | None = None
    root: JobRef | None = None
    run_by: JobRef | None = None


def orchestration(job_name: str, run_facets: Mapping[str, Any]) -> Orchestration:
    facet = run_facets.get("parent")
    if not isinstance(facet, dict):
        return _NOT_ORCHESTRATED
    parent = _job_ref(facet)
    root = facet.get("root")
    root = _job_ref(root) if root is not None else None
    # the nearest that is not the run's own application (its own job, or a prefix `{name}.` of it)
    if parent is not None and parent.name != job_name and not job_name.startswith(parent.name + "."):
        return Orchestration(parent, root, parent)
    if root is not None and root.name != job_name and not job_name.startswith(root.name + "."):
        return Orchestration(parent, root, root)
    return Orchestration(parent, root, None)


_NOT_ORCHESTRATED = Orchestration()


def is_application_run(job_facets: Mapping[str, Any]) -> bool:
    """An application-level run (the `jobType` facet's `jobType: APPLICATION`, openlineage-spark's
    `SparkApplicationExecutionContext`): the parent of the SQL jobs' runs, not a process of its own."""
    facet = job_facets.get("jobType")
    value = facet.get("jobType") if isinstance(facet, dict) else None
    return isinstance(value, str) and value.strip().upper() == "APPLICATION"


def _job_ref(value: Any) -> JobRef | None:
    if not isinstance(value, dict):
        return None
    job = value.get("job")
    if not isinstance(job, dict):
        return None
    name = _text(job.get("name"))
    if not name:
        return None
    run = value.get("run")
    run_id = _text(run.get("runId")) if isinstance(run, dict) else None
    return JobRef(_text(job.get("namespace")) or "", name, run_id or "")
