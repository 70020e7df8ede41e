"""Config errors name the rule (index and name) and the field; all problems are collected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from olparser.naming import ConfigError, MappingEngine
from tests.support.rules import rule

GOOD = rule("good", [("prefix", "=", "x")], "x://{nameGroups[0]}")


def error_for(rules) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        MappingEngine.from_rules(rules)
    return info.value


@pytest.mark.parametrize(
    "bad, field, message",
    [
        ({"name": "r", "parserConditions": [], "purviewDataType": "t"}, None, "'qualifiedName' is a required property"),
        (
            {**rule("r", [], "x"), "qualifiedname": "typo", "_note": "ok"},
            "qualifiedname",
            "unknown field (allowed: name, description, ",
        ),
        (
            rule("r", [("prefix", "=", "x")], "x")
            | {"parserConditions": [{"op1": "prefix", "compare": "=", "op2": "x", "opt": 1}]},
            "parserConditions[0].opt",
            "unknown field (allowed: op1, compare, op2;",
        ),
        (rule("r", [("prefix", "~", "x")], "x"), "parserConditions[0].compare", "'~' is not one of"),
        (
            rule("r", [("prefix", "=", None)], "x"),
            "parserConditions[0].op2",
            "None is not valid under any of the given schemas",
        ),
        (rule("r", [], ""), "qualifiedName", "'' should be non-empty"),
        (rule("r", [], "x", normalize=["upper"]), "normalize[0]", "'upper' is not one of"),
        (
            rule("r", [("nameSpcBodyPart[0]", "=", "x")], "x"),
            "parserConditions[0].op1",
            "unknown token 'nameSpcBodyPart'",
        ),
        (rule("r", [("nameGroups", ">", "many")], "x"), "parserConditions[0].op2", "'many' is not a number"),
        (rule("r", [], "x://{nameGroups[0]"), "qualifiedName", "unclosed '{' at position 4"),
        (rule("r", [], "x://{nope}"), "qualifiedName", "placeholder at position 4: unknown token 'nope'"),
    ],
)
def test_errors_carry_rule_index_name_and_field(bad, field, message):
    error = error_for([GOOD, bad])
    assert (error.rule_index, error.rule_name, error.field) == (1, "r", field)
    assert message in str(error)
    assert str(error).startswith("rule 1 'r'" + (f", field {field}: " if field else ": "))


def test_every_problem_is_collected():
    error = error_for([rule("a", [], "{x}"), GOOD, rule("c", [("bad", "=", "1")], "{y}")])
    assert [(p.rule_index, p.field) for p in error.problems] == [
        (0, "qualifiedName"),
        (2, "parserConditions[0].op1"),
        (2, "qualifiedName"),
    ]
    assert str(error).endswith("(and 2 more problem(s))")


def test_a_rule_that_is_not_an_object():
    error = error_for([GOOD, "rule"])
    assert (error.rule_index, error.rule_name, error.field) == (1, None, None)
    assert "'rule' is not of type 'object'" in str(error)


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "[{",
            "the mapping config is not valid JSON: Expecting property name enclosed in double quotes (line 1, column 3)",
        ),
        (
            '{"other": []}',
            "a mapping config is a JSON list of rules, or an object with an 'olToPurviewMappings' or 'rules' list",
        ),
        ("42", "a mapping config is a JSON list of rules"),
    ],
)
def test_file_level_errors(text, message):
    with pytest.raises(ConfigError) as info:
        MappingEngine.from_json_text(text)
    assert message in str(info.value)
    assert info.value.rule_index is None


def test_unreadable_file_is_a_config_error(tmp_path: Path):
    with pytest.raises(ConfigError, match="cannot read mapping config .*missing.json: No such file or directory"):
        MappingEngine.from_path(tmp_path / "missing.json")


def test_reference_shaped_rules_load_unchanged():
    """Rules written for the reference connector: its field names, string numbers, purviewPrefix, contains-in."""
    reference = [
        {
            "name": "synapseSqlNonDbo",
            "parserConditions": [
                {"op1": "prefix", "compare": "=", "op2": "sqlserver"},
                {"op1": "nameSpcBodyParts[0]", "compare": "contains", "op2": "azuresynapse"},
                {"op1": "nameGroups[0].parts", "compare": ">", "op2": "1"},
            ],
            "qualifiedName": "mssql://{nameSpcBodyParts[0]}/{nameSpcNameVals['database']}/{nameGroups[0].parts[0]}/{nameGroups[0].parts[1]}",
            "purviewDataType": "azure_synapse_dedicated_sql_table",
            "purviewPrefix": "mssql",
        },
        {
            "name": "hiveWs",
            "parserConditions": [
                {"op1": "AdbWorkspaceUrl", "compare": "contains-in", "op2": "adb-111|adb-222"},
                {"op1": "prefix", "compare": "=", "op2": "dbfs"},
            ],
            "qualifiedName": "default.{nameGroups[0].parts[3]}@{AdbWorkspaceUrl}",
            "purviewDataType": "hive_table",
            "purviewPrefix": "hive",
        },
    ]
    engine = MappingEngine.from_json_text(json.dumps({"olToPurviewMappings": reference}))
    assert (
        engine.map("sqlserver://w.sql.azuresynapse.net:1433;database=P;", "s.t").qualified_name
        == "mssql://w.sql.azuresynapse.net/P/s/t"
    )
    hive = engine.map("dbfs", "/user/hive/warehouse/t", workspace_url="adb-222.2.azuredatabricks.net")
    assert hive.qualified_name == "default.t@adb-222.2.azuredatabricks.net"
    assert engine.map("dbfs", "/user/hive/warehouse/t", workspace_url="adb-333.3.azuredatabricks.net").matched is False
