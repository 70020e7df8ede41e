"""deploy/azuredeploy.json, checked without Azure: it parses; the app settings it sets are exactly the ones the code
reads (discovered by calling `Settings.from_env` with a recording mapping, and from function_app.py's own reads), with
the code's defaults; the queue, container and table names match the function's bindings and the code's constants;
and it describes a Linux Python 3.11 Function App with a managed identity, Application Insights and lifecycle rules.

When a setting is added to olparser/settings.py, the second test fails naming it: add it to the template."""

from __future__ import annotations

import ast
import json
import logging
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

from olparser.adapters.delivery.poison import poison_at_once
from olparser.adapters.delivery.queues import SqliteQueueService, poison_queue_name
from olparser.history.store import HISTORY_TABLE
from olparser.runs.store import RUN_STATE_TABLE
from olparser.settings import Settings
from tests.support.poison_runtime import UNKNOWN
from tests.support.poison_runtime import Runtime as PoisonRuntime
from tools.functions_host.functions import describe_functions, load_app

PROJECT_ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = json.loads((PROJECT_ROOT / "deploy" / "azuredeploy.json").read_text(encoding="utf-8"))
# Read by the code but set by the platform, not by us.
SET_BY_AZURE = {"WEBSITE_INSTANCE_ID": "set on every instance; tells Settings it runs in Azure"}
# Set by the template for the platform (the Functions host, Application Insights), not read by our code.
FOR_THE_PLATFORM = {"APPLICATIONINSIGHTS_CONNECTION_STRING", "APPLICATIONINSIGHTS_AUTHENTICATION_STRING"}
# Read by the code but deliberately not set in Azure, and why.
NOT_SET_IN_AZURE = {
    "AzureWebJobsStorage": "an account-key connection string; Azure uses AzureWebJobsStorage__* (identity)"
}
# Settings whose template value deliberately differs from the code's local default, and why.
AZURE_VALUES = {
    "run_state_store": "table: shared by scaled-out instances",
    "data_dir": "/tmp: the app folder is read-only in Azure",
    "archive_store": "blob: the archive lives in the storage account's lineage-archive container",
}
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
            if (
                target in ("os.environ.get", "environ.get", "os.getenv", "getenv")
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                names.add(node.args[0].value)
        if (
            isinstance(node, ast.Subscript)
            and ast.unparse(node.value) in ("os.environ", "environ")
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        ):
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
    return resolve(
        TEMPLATE["parameters"][name].get("defaultValue") if kind == "parameters" else TEMPLATE["variables"][name]
    )


def site() -> dict[str, Any]:
    [app] = resources("Microsoft.Web/sites")
    return app


def app_settings() -> dict[str, Any]:
    return {item["name"]: item["value"] for item in site()["properties"]["siteConfig"]["appSettings"]}


def platform_settings() -> set[str]:
    return FOR_THE_PLATFORM


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
    missing = sorted(read - template - set(SET_BY_AZURE) - set(NOT_SET_IN_AZURE))
    unknown = sorted(template - read - platform_settings())
    assert (missing, unknown) == ([], []), (
        f"add these settings to deploy/azuredeploy.json: {missing}; these are set but nothing reads them: {unknown}"
    )


def test_the_settings_carry_the_code_defaults_except_where_azure_needs_another_value():
    literal = {name: resolve(value) for name, value in app_settings().items()}
    literal = {name: value for name, value in literal.items() if isinstance(value, str) and not value.startswith("[")}
    literal["LINEAGE_ON_FAILURE"] = str(TEMPLATE["parameters"]["lineageOnFailure"]["defaultValue"]).lower()
    deployed, local = Settings.from_env(literal), Settings()
    different = {f.name for f in fields(Settings) if getattr(deployed, f.name) != getattr(local, f.name)}
    assert different == set(AZURE_VALUES)
    assert deployed.run_state_store == "table"


def test_storage_names_match_the_bindings_and_the_code():
    queues, containers, tables = (
        storage_child(kind)
        for kind in (
            "Microsoft.Storage/storageAccounts/queueServices/queues",
            "Microsoft.Storage/storageAccounts/blobServices/containers",
            "Microsoft.Storage/storageAccounts/tableServices/tables",
        )
    )
    bound = {b.settings["queueName"] for b in QUEUE_BINDINGS}
    assert bound == {"lineage-events"}
    assert queues == bound | {poison_queue_name(q) for q in bound}
    settings = {name: resolve(value) for name, value in app_settings().items()}
    assert settings["LINEAGE_QUEUE"] in bound
    assert {settings["CLAIM_CHECK_CONTAINER"], "lineage-archive"} <= containers
    assert tables == {RUN_STATE_TABLE, HISTORY_TABLE}
    connections = {b.settings["connection"] for b in QUEUE_BINDINGS}
    assert connections == {"AzureWebJobsStorage"}
    assert {f"{c}__accountName" for c in connections} <= set(app_settings())  # identity-based: no connection string


def test_the_claim_check_and_archive_containers_have_lifecycle_rules():
    [policy] = resources("Microsoft.Storage/storageAccounts/managementPolicies")
    prefixes = {
        resolve(re.sub(r"^\[concat\((variables\('\w+'\)), '/'\)\]$", r"[\1]", prefix)): rule["definition"]
        for rule in policy["properties"]["policy"]["rules"]
        for prefix in rule["definition"]["filters"]["prefixMatch"]
    }
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


# --- enterprise policy (#23 item 2) ----------------------------------------------------------------------------------
STORAGE_DATA_ROLES = {
    "b7e6dc6d-f1e8-4753-8033-0f276bb0955b": "Storage Blob Data Owner",
    "974c5e8b-45b9-4653-ba55-5f855dd0fb88": "Storage Queue Data Contributor",
    "0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3": "Storage Table Data Contributor",
}
MONITORING_METRICS_PUBLISHER = "3913510d-42f4-4e42-8a64-420c390055eb"
TEMPLATE_TEXT = (PROJECT_ROOT / "deploy" / "azuredeploy.json").read_text(encoding="utf-8")


def storage_account() -> dict[str, Any]:
    [account] = resources("Microsoft.Storage/storageAccounts")
    return account


def test_no_account_key_anywhere_shared_keys_off_and_oauth_by_default():
    """Policy "Storage accounts should prevent shared key access": nothing reads a key, the account refuses them."""
    assert "listKeys" not in TEMPLATE_TEXT and "AccountKey" not in TEMPLATE_TEXT
    properties = storage_account()["properties"]
    assert (properties["allowSharedKeyAccess"], properties["defaultToOAuthAuthentication"]) == (False, True)
    assert (properties["allowBlobPublicAccess"], properties["minimumTlsVersion"]) == (False, "TLS1_2")
    assert "AzureWebJobsStorage" not in app_settings()
    deployment = site()["properties"]["functionAppConfig"]["deployment"]["storage"]
    assert deployment["authentication"] == {"type": "SystemAssignedIdentity"}


def test_the_identity_settings_point_the_host_and_the_code_at_the_template_storage_account():
    settings = app_settings()
    assert resolve(settings["AzureWebJobsStorage__accountName"]) == TEMPLATE["variables"]["storageAccountName"]
    for service in ("blob", "queue", "table"):
        assert (
            settings[f"AzureWebJobsStorage__{service}ServiceUri"]
            == f"[reference(variables('storageId'), '2023-05-01').primaryEndpoints.{service}]"
        )
    # what the code makes of those settings once Azure has filled them in
    deployed = Settings.from_env(
        {
            "AzureWebJobsStorage__accountName": "ol2pxyz",
            **{
                f"AzureWebJobsStorage__{s}ServiceUri": f"https://ol2pxyz.{s}.core.windows.net/"
                for s in ("blob", "queue", "table")
            },
        }
    )
    assert (deployed.storage_connection, deployed.storage_endpoints.queue) == (
        None,
        "https://ol2pxyz.queue.core.windows.net",
    )


def test_the_app_identity_gets_the_storage_data_roles_and_the_metrics_publisher_role():
    assignments = resources("Microsoft.Authorization/roleAssignments")
    principal = "[reference(variables('siteId'), '2024-04-01', 'full').identity.principalId]"
    assert {a["properties"]["principalId"] for a in assignments} == {principal}
    assert {a["properties"]["principalType"] for a in assignments} == {"ServicePrincipal"}
    assert TEMPLATE["variables"]["siteId"] == "[resourceId('Microsoft.Web/sites', parameters('appName'))]"
    [storage_roles] = [a for a in assignments if a.get("copy")]
    assert storage_roles["scope"] == "[concat('Microsoft.Storage/storageAccounts/', variables('storageAccountName'))]"
    assert storage_roles["copy"]["count"] == "[length(items(variables('storageDataRoles')))]"
    assert {v: k for k, v in TEMPLATE["variables"]["storageDataRoles"].items()} == STORAGE_DATA_ROLES
    [insights_role] = [a for a in assignments if not a.get("copy")]
    assert insights_role["scope"] == "[concat('Microsoft.Insights/components/', variables('insightsName'))]"
    assert TEMPLATE["variables"]["monitoringMetricsPublisherRole"] == MONITORING_METRICS_PUBLISHER
    [insights] = resources("Microsoft.Insights/components")
    assert insights["properties"]["DisableLocalAuth"] is True  # ingestion with the identity only
    assert app_settings()["APPLICATIONINSIGHTS_AUTHENTICATION_STRING"] == "Authorization=AAD"


def test_vnet_integration_private_endpoints_and_public_access_are_parameters():
    parameters = TEMPLATE["parameters"]
    assert {
        name: parameters[name]["defaultValue"]
        for name in (
            "vnetSubnetId",
            "privateEndpointSubnetId",
            "purviewAccountResourceId",
            "privateDnsZoneIds",
            "storagePublicNetworkAccess",
        )
    } == {
        "vnetSubnetId": "",
        "privateEndpointSubnetId": "",
        "purviewAccountResourceId": "",
        "privateDnsZoneIds": {},
        "storagePublicNetworkAccess": "Enabled",
    }
    app = site()["properties"]
    assert (
        app["virtualNetworkSubnetId"]
        == "[if(empty(parameters('vnetSubnetId')), json('null'), parameters('vnetSubnetId'))]"
    )
    assert storage_account()["properties"]["publicNetworkAccess"] == "[parameters('storagePublicNetworkAccess')]"
    endpoints = resources("Microsoft.Network/privateEndpoints")
    [storage_pe] = [e for e in endpoints if e.get("copy")]
    [purview_pe] = [e for e in endpoints if not e.get("copy")]
    assert TEMPLATE["variables"]["usePrivateEndpoints"] == "[not(empty(parameters('privateEndpointSubnetId')))]"
    assert storage_pe["condition"] == "[variables('usePrivateEndpoints')]"
    assert TEMPLATE["variables"]["storageServices"] == ["blob", "queue", "table"]  # every service the app uses
    [connection] = storage_pe["properties"]["privateLinkServiceConnections"]
    assert connection["properties"] == {
        "privateLinkServiceId": "[variables('storageId')]",
        "groupIds": ["[variables('storageServices')[copyIndex()]]"],
    }
    assert "parameters('purviewAccountResourceId')" in purview_pe["condition"]
    [connection] = purview_pe["properties"]["privateLinkServiceConnections"]
    assert connection["properties"] == {
        "privateLinkServiceId": "[parameters('purviewAccountResourceId')]",
        "groupIds": ["account"],
    }
    assert all(e["properties"]["subnet"] == {"id": "[parameters('privateEndpointSubnetId')]"} for e in endpoints)
    zones = resources("Microsoft.Network/privateEndpoints/privateDnsZoneGroups")
    assert len(zones) == 2 and all("privateDnsZones" in zone["condition"] for zone in zones)


def test_inbound_ip_restrictions_deny_everyone_else_once_a_range_is_given():
    assert TEMPLATE["parameters"]["allowedInboundIpRanges"] == {
        "type": "array",
        "defaultValue": [],
        "metadata": TEMPLATE["parameters"]["allowedInboundIpRanges"]["metadata"],
    }
    config = site()["properties"]["siteConfig"]
    assert (
        config["ipSecurityRestrictionsDefaultAction"]
        == "[if(empty(parameters('allowedInboundIpRanges')), 'Allow', 'Deny')]"
    )
    [loop] = config["copy"]
    assert (loop["name"], loop["count"]) == ("ipSecurityRestrictions", "[length(parameters('allowedInboundIpRanges'))]")
    assert loop["input"]["action"] == "Allow"
    assert loop["input"]["ipAddress"] == "[parameters('allowedInboundIpRanges')[copyIndex('ipSecurityRestrictions')]]"
    assert config["scmIpSecurityRestrictionsUseMain"] is True


def test_alerts_on_the_poison_queue_and_on_repeated_failures_notify_the_action_group():
    rules = {r["name"]: r["properties"] for r in resources("Microsoft.Insights/scheduledQueryRules")}
    assert set(rules) == {
        "[concat(parameters('appName'), '-poison-queue')]",
        "[concat(parameters('appName'), '-failures')]",
    }
    poison = rules["[concat(parameters('appName'), '-poison-queue')]"]
    failures = rules["[concat(parameters('appName'), '-failures')]"]
    [poison_criterion], [failure_criterion] = poison["criteria"]["allOf"], failures["criteria"]["allOf"]
    poison_queue = poison_queue_name(resolve(app_settings()["LINEAGE_QUEUE"]))
    assert poison_criterion["query"] == f"traces | where message has '{poison_queue}'"
    assert (poison_criterion["operator"], poison_criterion["threshold"]) == ("GreaterThan", 0)
    assert failure_criterion["query"] == "requests | where success == false"
    assert (failure_criterion["operator"], failure_criterion["threshold"]) == (
        "GreaterThanOrEqual",
        "[parameters('failureAlertThreshold')]",
    )
    for rule in (poison, failures):
        assert rule["autoMitigate"] is True  # resolved when the poison queue is empty again / failures stop
        assert rule["scopes"] == ["[variables('insightsId')]"]
        assert rule["actions"] == {"actionGroups": "[variables('alertActions')]"}
    assert TEMPLATE["variables"]["alertActions"] == (  # scheduledQueryRules take action group ids, as strings
        "[if(empty(parameters('alertActionGroupId')), createArray(), createArray(parameters('alertActionGroupId')))]"
    )
    assert TEMPLATE["parameters"]["alertActionGroupId"]["defaultValue"] == ""


def test_the_poison_alert_finds_the_lines_our_code_logs_about_the_poison_queue(tmp_path, caplog, monkeypatch):
    """The alert's query finds the worker's line when it poisons at once and the timer's warning while the poison
    queue is not empty (as well as the host's "Moving message to queue '...'" line)."""
    import function_app
    from olparser.adapters import operations
    from olparser.pipeline import DueReport

    service = SqliteQueueService(tmp_path / "queues.sqlite3")
    monkeypatch.setattr(function_app, "process_runtime", lambda: None)  # the tick's work is faked just below
    monkeypatch.setattr(operations, "write_due_runs", lambda runtime: DueReport(poison_waiting=1))
    with caplog.at_level(logging.WARNING):
        assert poison_at_once(PoisonRuntime(service), "lineage-events", "{}", UNKNOWN, "run-1") is True
        function_app.write_due_runs(None)
    lines = [r.getMessage() for r in caplog.records]
    [rule] = [r for r in resources("Microsoft.Insights/scheduledQueryRules") if "poison" in r["name"]]
    term = re.fullmatch(r"traces \| where message has '([^']+)'", rule["properties"]["criteria"]["allOf"][0]["query"])
    assert len(lines) == 2
    for line in lines:
        assert re.search(rf"(?<![\w-]){re.escape(term.group(1))}(?![\w-])", line), line  # KQL `has`: a whole term


def test_the_outputs_give_the_function_url_and_the_lineage_endpoint():
    outputs = TEMPLATE["outputs"]
    assert outputs["functionAppUrl"]["value"].startswith(
        "[concat('https://', reference(resourceId('Microsoft.Web/sites'"
    )
    assert outputs["lineageEndpointUrl"]["value"].endswith(".defaultHostName, '/api/v1/lineage')]")


def _strings(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_every_template_expression_is_well_formed():
    """Parentheses balance outside quotes, quotes close, and every function, parameter and variable named exists."""
    known = {
        "parameters",
        "variables",
        "concat",
        "resourceId",
        "subscriptionResourceId",
        "reference",
        "resourceGroup",
        "uniqueString",
        "environment",
        "if",
        "empty",
        "not",
        "and",
        "equals",
        "json",
        "length",
        "items",
        "copyIndex",
        "add",
        "guid",
        "createArray",
        "createObject",
        "union",
    }
    expressions = [s for s in _strings(TEMPLATE) if s.startswith("[") and s.endswith("]") and not s.startswith("[[")]
    assert len(expressions) > 80
    for expression in expressions:
        body, depth, quoted = expression[1:-1], 0, False
        for char in body:
            if char == "'":
                quoted = not quoted
            elif not quoted:
                depth += {"(": 1, ")": -1}.get(char, 0)
                assert depth >= 0, expression
        assert (depth, quoted) == (0, False), expression
        unquoted = re.sub(r"'[^']*'", "''", body)
        assert set(re.findall(r"([A-Za-z]\w*)\(", unquoted)) <= known, expression
        for kind, name in re.findall(r"(parameters|variables)\('([^']+)'\)", body):
            assert name in TEMPLATE[kind], (name, expression)
