"""deploy/azuredeploy.json, checked without Azure: it parses; the app settings it sets are exactly the ones the code
reads (discovered by calling `Settings.from_env` with a recording mapping, and from function_app.py's own reads), with
the code's defaults; the queue, container and table names match the function's bindings and the code's constants;
and it describes a Linux Python 3.11 Function App with a managed identity, Application Insights and lifecycle rules.

When a setting is added to olparser/settings.py, the second test fails naming it: add it to the template."""
from __future__ import annotations

import ast
import json
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

from olparser.delivery.queues import poison_queue_name
from olparser.history.store import HISTORY_TABLE
from olparser.runs.store import RUN_STATE_TABLE
from olparser.settings import Settings
from tools.functions_host.functions import describe_functions, load_app

PROJECT_ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = json.loads((PROJECT_ROOT / "deploy" / "azuredeploy.json").read_text(encoding="utf-8"))
# Read by the code but set by the platform, not by us.
SET_BY_AZURE = {"WEBSITE_INSTANCE_ID": "set on every instance; tells Settings it runs in Azure"}
# Set by the template for the platform (the Functions host, Application Insights), not read by our code.
FOR_THE_PLATFORM = {"APPLICATIONINSIGHTS_CONNECTION_STRING"}
# Settings whose template value deliberately differs from the code's local default, and why.
AZURE_VALUES = {"run_state_store": "table: shared by scaled-out instances",
                "data_dir": "/tmp: the app folder is read-only in Azure",
                "archive_store": "blob: the archive lives in the storage account's lineage-archive container"}
_EXPRESSION = re.compile(r"^\[(parameters|variables)\('([^']+)'\)\]$")


class RecordingEnv(dict):
    """An empty environment that remembers every setting the code asks it for."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[str] = []

    def get(self, key: str, default: Any = None) -> Any:
        self.read.append(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.read.append(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.read.append(str(key))
        return super().__contains__(key)


def settings_read_by_settings_py() -> set[str]:
    env = RecordingEnv()
    Settings.from_env(env)
    return set(env.read)


def settings_read_by_function_app() -> set[str]:
    """`os.environ.get("X")`, `os.getenv("X")` and `os.environ["X"]` in function_app.py (read at import)."""
    tree = ast.parse((PROJECT_ROOT / "function_app.py").read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            target = ast.unparse(node.func)
            if target in ("os.environ.get", "environ.get", "os.getenv", "getenv") and \
                    isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                names.add(node.args[0].value)
        if isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("os.environ", "environ") and \
                isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            names.add(node.slice.value)
    return names


def resources(kind: str) -> list[dict[str, Any]]:
    return [r for r in TEMPLATE["resources"] if r["type"] == kind]


def resolve(value: Any) -> Any:
    """A template value with `[parameters('x')]` / `[variables('x')]` replaced by the default or the variable;
    other expressions are returned as they are."""
    match = _EXPRESSION.match(value) if isinstance(value, str) else None
    if match is None:
        return value
    kind, name = match.groups()
    return resolve(TEMPLATE["parameters"][name].get("defaultValue") if kind == "parameters"
                   else TEMPLATE["variables"][name])


def site() -> dict[str, Any]:
    [app] = resources("Microsoft.Web/sites")
    return app


def app_settings() -> dict[str, Any]:
    return {item["name"]: item["value"] for item in site()["properties"]["siteConfig"]["appSettings"]}


def platform_settings() -> set[str]:
    storage = site()["properties"]["functionAppConfig"]["deployment"]["storage"]["authentication"]
    return FOR_THE_PLATFORM | {storage["storageAccountConnectionStringName"]}


def storage_child(kind: str) -> set[str]:
    found = set()
    for resource in resources(kind):
        variable = re.search(r"variables\('(\w+)'\)\)\]$", resource["name"])
        assert variable, resource["name"]
        found.add(TEMPLATE["variables"][variable.group(1)])
    return found


FUNCTIONS = describe_functions(load_app(PROJECT_ROOT / "function_app.py"))
QUEUE_BINDINGS = [b for f in FUNCTIONS for b in (f.trigger, *f.outputs) if b.type in ("queueTrigger", "queue")]


def test_it_parses_and_takes_the_three_parameters():
    assert TEMPLATE["$schema"].endswith("deploymentTemplate.json#")
    required = {name for name, p in TEMPLATE["parameters"].items() if "defaultValue" not in p}
    assert required == {"appName", "purviewAccountName"}
    assert TEMPLATE["parameters"]["location"]["defaultValue"] == "[resourceGroup().location]"


def test_every_setting_the_code_reads_is_set_and_every_setting_set_is_read():
    read = settings_read_by_settings_py() | settings_read_by_function_app()
    template = set(app_settings())
    missing = sorted(read - template - set(SET_BY_AZURE))
    unknown = sorted(template - read - platform_settings())
    assert (missing, unknown) == ([], []), (
        f"add these settings to deploy/azuredeploy.json: {missing}; these are set but nothing reads them: {unknown}")


def test_the_settings_carry_the_code_defaults_except_where_azure_needs_another_value():
    literal = {name: resolve(value) for name, value in app_settings().items()}
    literal = {name: value for name, value in literal.items() if isinstance(value, str) and not value.startswith("[")}
    literal["LINEAGE_ON_FAILURE"] = str(TEMPLATE["parameters"]["lineageOnFailure"]["defaultValue"]).lower()
    deployed, local = Settings.from_env(literal), Settings()
    different = {f.name for f in fields(Settings) if getattr(deployed, f.name) != getattr(local, f.name)}
    assert different == set(AZURE_VALUES)
    assert deployed.run_state_store == "table"


def test_storage_names_match_the_bindings_and_the_code():
    queues, containers, tables = (storage_child(kind) for kind in (
        "Microsoft.Storage/storageAccounts/queueServices/queues",
        "Microsoft.Storage/storageAccounts/blobServices/containers",
        "Microsoft.Storage/storageAccounts/tableServices/tables"))
    bound = {b.settings["queueName"] for b in QUEUE_BINDINGS}
    assert bound == {"lineage-events"}
    assert queues == bound | {poison_queue_name(q) for q in bound}
    settings = {name: resolve(value) for name, value in app_settings().items()}
    assert settings["LINEAGE_QUEUE"] in bound
    assert {settings["CLAIM_CHECK_CONTAINER"], "lineage-archive"} <= containers
    assert tables == {RUN_STATE_TABLE, HISTORY_TABLE}
    assert {b.settings["connection"] for b in QUEUE_BINDINGS} <= set(app_settings())


def test_the_claim_check_and_archive_containers_have_lifecycle_rules():
    [policy] = resources("Microsoft.Storage/storageAccounts/managementPolicies")
    prefixes = {resolve(re.sub(r"^\[concat\((variables\('\w+'\)), '/'\)\]$", r"[\1]", prefix)): rule["definition"]
                for rule in policy["properties"]["policy"]["rules"]
                for prefix in rule["definition"]["filters"]["prefixMatch"]}
    assert set(prefixes) == {"lineage-events", "lineage-archive"}
    assert all("delete" in definition["actions"]["baseBlob"] for definition in prefixes.values())


def test_a_linux_python_311_flex_consumption_app_with_identity_and_insights():
    app = site()
    config = app["properties"]["functionAppConfig"]
    assert (app["kind"], app["identity"]["type"]) == ("functionapp,linux", "SystemAssigned")
    assert config["runtime"] == {"name": "python", "version": "3.11"}
    [plan] = resources("Microsoft.Web/serverfarms")
    assert (plan["sku"], plan["properties"]["reserved"]) == ({"name": "FC1", "tier": "FlexConsumption"}, True)
    assert resources("Microsoft.Insights/components")
    assert "APPLICATIONINSIGHTS_CONNECTION_STRING" in app_settings()
    assert {"FUNCTIONS_WORKER_RUNTIME", "FUNCTIONS_EXTENSION_VERSION"}.isdisjoint(app_settings())  # not on Flex
    assert app["properties"]["httpsOnly"] is True
    assert set(TEMPLATE["outputs"]) >= {"principalId", "functionAppUrl"}


def test_host_json_uses_the_queue_encoding_the_code_writes():
    host = json.loads((PROJECT_ROOT / "host.json").read_text(encoding="utf-8"))
    assert host["extensions"]["queues"]["messageEncoding"] == "base64"  # AzureQueueService's default
