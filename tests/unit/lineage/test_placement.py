"""Placement rules (olparser/lineage/placement.py): the file's format and its problems, and which rule a run matches."""

from __future__ import annotations

import json

import pytest

from olparser.lineage.placement import load_rules, matching_rule, parse_rules, problems, run_facts
from olparser.lineage.plan import is_process

WORKSPACE = "adb-5544332211009988.4.azuredatabricks.net"
# openlineage-spark on Databricks: job namespace "adb-<workspace id>.<n>#<cluster id>" (tools/samples/databricks.py)
NAMESPACE = "adb-5544332211009988.4#0101-123456-abcdefgh"
OUTPUT = "https://lakeacct.dfs.core.windows.net/gold/finance/daily.csv"
PLAN = [
    {"typeName": "databricks_workspace", "attributes": {"qualifiedName": f"databricks://{WORKSPACE}"}},
    {
        "typeName": "databricks_process",
        "attributes": {
            "qualifiedName": "p",
            "lastRunId": "r",
            "openlineageJob": f"{NAMESPACE}/orders.write",
            "outputs": [{"typeName": "azure_datalake_gen2_path", "uniqueAttributes": {"qualifiedName": OUTPUT}}],
        },
    },
]


def rules(*items: dict) -> tuple:
    return parse_rules({"rules": list(items)})


@pytest.mark.parametrize(
    "rule, matches",
    [
        ({"collection": "c", "jobNamespace": NAMESPACE}, True),
        ({"collection": "c", "jobNamespace": "adb-5544332211009988.4"}, False),  # the whole namespace, not a prefix
        ({"collection": "c", "workspace": WORKSPACE.upper()}, True),
        ({"collection": "c", "workspace": "adb-1.2.azuredatabricks.net"}, False),
        ({"collection": "c", "outputPrefix": "https://lakeacct.dfs.core.windows.net/gold/finance/"}, True),
        ({"collection": "c", "outputPrefix": "https://lakeacct.dfs.core.windows.net/gold/sales/"}, False),
    ],
)
def test_each_condition(rule, matches):
    assert (matching_rule(rules(rule), run_facts(PLAN, is_process)) is not None) is matches


def test_the_first_matching_rule_wins():
    found = matching_rule(
        rules(
            {"collection": "a", "outputPrefix": "https://other/"},
            {"collection": "b", "workspace": WORKSPACE},
            {"collection": "c", "jobNamespace": NAMESPACE},
        ),
        run_facts(PLAN, is_process),
    )
    assert (found.collection, found.describe()) == ("b", f"workspace '{WORKSPACE}' -> collection 'b'")


def test_problems_name_the_rule_and_the_field():
    assert problems(
        {
            "rules": [
                {"collection": "a"},
                {"collection": "", "workspace": "databricks://x", "outputPrefix": "y"},
                {"collection": "b", "jobNamespace": 3, "colour": "red"},
                "rule",
            ],
            "extra": 1,
        }
    ) == [
        "unknown key 'extra' (expected 'rules')",
        "rule 1: give exactly one of jobNamespace, workspace, outputPrefix (got none)",
        "rule 2: 'collection' must name a collection (its name or friendly name)",
        "rule 2: give exactly one of jobNamespace, workspace, outputPrefix (got workspace, outputPrefix)",
        "rule 2: 'workspace' is the host (adb-....azuredatabricks.net), without databricks://",
        "rule 3: 'jobNamespace' must be a non-empty string",
        "rule 3: unknown key(s) 'colour'",
        "rule 4: a rule is a JSON object with 'collection' and one of jobNamespace, workspace, outputPrefix",
    ]
    assert problems([]) == ['the placement rules must be a JSON object {"rules": [...]}']


def test_a_file_with_problems_is_refused_naming_it(tmp_path):
    path = tmp_path / "placement.json"
    path.write_text(json.dumps({"rules": [{"collection": "a"}]}))
    with pytest.raises(ValueError, match=f"PLACEMENT_RULES_PATH {path}: placement rules: rule 1: give exactly one"):
        load_rules(path)
    path.write_text("{")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_rules(path)
    assert load_rules(None) == ()


def test_qn_tester_lint_checks_the_placement_rules_too(tmp_path):
    from tests.support.qn_tester_runs import qn_tester

    path = tmp_path / "placement.json"
    path.write_text(
        json.dumps(
            {"rules": [{"collection": "fin01a", "workspace": WORKSPACE}, {"collection": "x", "outputPrefix": ""}]}
        )
    )
    done = qn_tester("lint", "--placement", str(path))
    assert (done.returncode, done.stdout) == (
        1,
        "config/OlToPurviewMappings.json: no problems found\n"
        "placement: rule 2: 'outputPrefix' must be a non-empty string\n"
        f"{path}: 1 problem(s)\n",
    )
    path.write_text(json.dumps({"rules": [{"collection": "fin01a", "workspace": WORKSPACE}]}))
    done = qn_tester("lint", env={"PLACEMENT_RULES_PATH": str(path)})  # the setting's file, by default
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, f"{path}: no problems found")
