"""What the builder needs to know about a run beyond its datasets: Databricks environment, workspace, app, user.

The Databricks workspace host is looked for, in this order (first found wins):
1. `spark.databricks.workspaceUrl` in the `environment-properties` facet or in `spark_properties` (when captured);
2. the workspace id (`spark.databricks.clusterUsageTags.clusterOwnerOrgId`, else `orgId`) looked up in
   `LineageOptions.workspace_hosts` (the id alone does not give the region shard of the host);
3. the job namespace, as the reference connector asked users to set it: `<workspace id>.<shard>#<cluster id>`, or a
   namespace that is or contains a workspace host;
4. a job name prefix that is a workspace host (recent openlineage-spark replaces `databricks_shell.` with it).
Real events checked: the accelerator sample carries only the workspace id (so 2.), the 0.12 quickstart nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from olparser.runs.model import RunSnapshot

from .identity import JobIdentity, job_identity, strip_application
from .options import LineageOptions

DATABRICKS_SHELL = "databricks_shell"
WORKSPACE_URL_KEY = "spark.databricks.workspaceUrl"
WORKSPACE_ID_KEYS = ("spark.databricks.clusterUsageTags.clusterOwnerOrgId", "orgId")

_NAMESPACE_ID_SHARD = re.compile(r"^(?:adb-)?(\d+)\.(\d+)(?:#.*)?$")
_AZURE_HOST = re.compile(r"adb-\d+\.\d+\.azuredatabricks\.net", re.IGNORECASE)
# Job name prefixes: the host itself, the host normalised by the job-name builder, an AWS workspace id.
_PREFIX_AZURE_HOST = re.compile(r"^(adb-\d+\.\d+\.azuredatabricks\.net)[._]", re.IGNORECASE)
_PREFIX_AZURE_NORMALISED = re.compile(r"^adb-(\d+)_(\d+)_azuredatabricks_net[._]", re.IGNORECASE)
_PREFIX_AWS = re.compile(r"^(dbc-[0-9a-f]+(?:-[0-9a-f]+)*)[._]", re.IGNORECASE)


@dataclass(frozen=True)
class RunContext:
    environment: Mapping[str, Any]  # the environment-properties map (empty outside Databricks)
    workspace_host: str | None  # e.g. adb-123.4.azuredatabricks.net
    workspace_source: str | None  # where the host came from (for notes)
    is_databricks: bool
    app_key: str  # the application's job name: stable across runs, present on every event
    app_display_name: str
    display_job_name: str  # the job name without the application / databricks_shell / host prefix
    user: str | None
    workspace_id: str | None = None  # clusterOwnerOrgId (or orgId) of the environment facet
    identity: JobIdentity | None = None  # the run's job identity (olparser.lineage.identity)

    @property
    def mount_points(self) -> Any:
        return self.environment.get("mountPoints")

    def env_text(self, key: str) -> str | None:
        value = self.environment.get(key)
        if value.__class__ is str:  # most values: the same as below, sooner
            return value.strip() or None
        if value is None or isinstance(value, (dict, list)):
            return None
        text = str(value).strip()
        return text or None


def run_context(run: RunSnapshot, options: LineageOptions) -> RunContext:
    environment = _environment(run.run_facets)
    properties = _facet(run.run_facets, "spark_properties").get("properties")
    properties = properties if isinstance(properties, dict) else {}
    host, source = _workspace_host(run, environment, properties, options)
    identity = job_identity(run.job_namespace, run.job_name, run.run_facets)
    app_key = identity.app_key
    is_databricks = (
        host is not None
        or any(str(k).startswith("spark.databricks.") for k in environment)
        or app_key == DATABRICKS_SHELL
    )
    user = environment.get("user") or _facet(run.run_facets, "spark_applicationDetails").get("userName")
    app_display = (
        identity.app_display_name
        or properties.get("spark.app.name")
        or _facet(run.run_facets, "spark_applicationDetails").get("appName")
        or app_key
    )
    workspace_id = next(
        (
            str(environment[key]).strip()
            for key in WORKSPACE_ID_KEYS
            if isinstance(environment.get(key), (str, int)) and str(environment[key]).strip()
        ),
        None,
    )
    return RunContext(
        environment=environment,
        workspace_host=host,
        workspace_source=source,
        is_databricks=is_databricks,
        app_key=app_key,
        app_display_name=str(app_display),
        # the identity's job name is the job name without its application prefix already
        display_job_name=(
            identity.job_name if identity.service else _without_host_prefix(run.job_name) or identity.job_name
        ),
        user=str(user) if user else None,
        workspace_id=workspace_id,
        identity=identity,
    )


def display_job_name(job_name: str, app_key: str) -> str:
    """The job name without its application prefix (`databricks_shell.`, a workspace host, the app name)."""
    return _without_host_prefix(job_name) or strip_application(job_name, app_key)


def _without_host_prefix(job_name: str) -> str | None:
    """The job name without a workspace host prefix, when it has one (and more than it)."""
    for pattern in (_PREFIX_AZURE_HOST, _PREFIX_AZURE_NORMALISED, _PREFIX_AWS):
        match = pattern.match(job_name)
        if match and len(job_name) > match.end():
            return job_name[match.end() :]
    return None


def _facet(facets: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = facets.get(name)
    return value if isinstance(value, dict) else {}


def _environment(run_facets: Mapping[str, Any]) -> Mapping[str, Any]:
    inner = _facet(run_facets, "environment-properties").get("environment-properties")
    return inner if isinstance(inner, dict) else {}


def _normalise_host(value: str) -> str | None:
    host = re.sub(r"^[a-z]+://", "", value.strip(), flags=re.IGNORECASE).split("/", 1)[0].lower()
    return host or None


def _workspace_host(
    run: RunSnapshot, environment: Mapping[str, Any], properties: Mapping[str, Any], options: LineageOptions
) -> tuple[str | None, str | None]:
    for source, value in (
        ("environment-properties", environment.get(WORKSPACE_URL_KEY)),
        ("spark_properties", properties.get(WORKSPACE_URL_KEY)),
    ):
        if isinstance(value, str) and _normalise_host(value):
            return _normalise_host(value), source
    for key in WORKSPACE_ID_KEYS:
        workspace_id = environment.get(key)
        if workspace_id and options.workspace_host_for(str(workspace_id)):
            return options.workspace_host_for(str(workspace_id)), "workspace_hosts"
    match = _NAMESPACE_ID_SHARD.match(run.job_namespace.strip())
    if match:
        return f"adb-{match.group(1)}.{match.group(2)}.azuredatabricks.net", "job namespace"
    found = _AZURE_HOST.search(run.job_namespace)
    if found:
        return found.group(0).lower(), "job namespace"
    match = _PREFIX_AZURE_HOST.match(run.job_name)
    if match:
        return match.group(1).lower(), "job name"
    match = _PREFIX_AZURE_NORMALISED.match(run.job_name)
    if match:
        return f"adb-{match.group(1)}.{match.group(2)}.azuredatabricks.net", "job name"
    match = _PREFIX_AWS.match(run.job_name)
    if match:
        return f"{match.group(1).lower()}.cloud.databricks.com", "job name"
    return None, None
