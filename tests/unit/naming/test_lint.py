"""`lint`: schema errors, unknown tokens, duplicate names and rules an earlier rule always shadows."""

from __future__ import annotations

import json

from olparser.naming import lint_config
from tests.support.rules import MAPPINGS_PATH, rule


def kinds(findings):
    return [(f.kind, f.rule_index, f.rule_name) for f in findings]


def test_the_shipped_default_config_is_clean():  # config/OlToPurviewMappings.json, the one rule file
    assert lint_config(json.loads(MAPPINGS_PATH.read_text())) == []


def test_duplicate_names():
    findings = lint_config([rule("a", [("prefix", "=", "x")], "1"), rule("a", [("prefix", "=", "y")], "2")])
    assert kinds(findings) == [("duplicate-name", 1, "a")]
    assert str(findings[0]) == "[duplicate-name] rule 1 'a', field name: the name is already used by rule 0"


def test_unknown_tokens_in_conditions_and_templates():
    findings = lint_config([rule("a", [("nameSpcBodyPart[0]", "=", "x")], "{nameGroupz[0]}")])
    assert [(f.kind, f.field) for f in findings] == [("token", "parserConditions[0].op1"), ("token", "qualifiedName")]


def test_template_syntax_and_operand_problems():
    findings = lint_config([rule("a", [("nameGroups", ">", "x")], "{prefix")])
    assert [(f.kind, f.field) for f in findings] == [
        ("operand", "parserConditions[0].op2"),
        ("template", "qualifiedName"),
    ]


def test_schema_errors():
    findings = lint_config([{"name": "a"}])
    assert {(f.kind, f.rule_index) for f in findings} == {("schema", 0)}
    assert lint_config({"nope": 1})[0].kind == "schema"


def test_a_general_rule_before_a_specific_one_shadows_it():
    rules = [
        rule("sql", [("prefix", "=", "sqlserver")], "mssql://{nameSpcBodyParts[0]}/{nameGroups[0]}"),
        rule(
            "sqlNonDbo",
            [("prefix", "=", "sqlserver"), ("nameGroups", ">", "1")],
            "mssql://{nameSpcBodyParts[0]}/{nameGroups[1]}",
        ),
    ]
    findings = lint_config(rules)
    assert kinds(findings) == [("shadowed", 1, "sqlNonDbo")]
    assert findings[0].message == "can never match: rule 0 'sql' always matches first"


def test_shadowing_understands_lists_substrings_prefixes_and_numbers():
    cases = [
        (("prefix", "=", ["abfs", "abfss"]), ("prefix", "=", "abfss")),
        (("nameSpcBodyParts[0]", "contains", "synapse"), ("nameSpcBodyParts[0]", "contains", "azuresynapse")),
        (("nameSpcBodyParts[0]", "startswith", "adb"), ("nameSpcBodyParts[0]", "=", "adb-1")),
        (("nameSpcBodyParts[0]", "endswith", ".net"), ("nameSpcBodyParts[0]", "endswith", "windows.net")),
        (("nameGroups", ">", 1), ("nameGroups", ">", "2")),
        (("nameGroups", "<", 5), ("nameGroups", "<", 3)),
        (("prefix", "!=", "wasbs"), ("prefix", "=", "abfss")),
    ]
    for general, specific in cases:
        findings = lint_config([rule("g", [general], "x"), rule("s", [specific], "y")])
        assert kinds(findings) == [("shadowed", 1, "s")], (general, specific)


def test_no_shadowing_when_the_earlier_rule_can_fall_through():
    rules = [
        rule("needsDb", [("prefix", "=", "sqlserver")], "{nameSpcNameVals['database']}/{nameGroups[0]}"),
        rule("noDb", [("prefix", "=", "sqlserver")], "{nameSpcBodyParts[0]}/{nameGroups[0]}"),
        rule("other", [("prefix", "=", "abfss"), ("nameGroups", ">", 2)], "x"),
        rule("otherLess", [("prefix", "=", "abfss"), ("nameGroups", ">", 1)], "x"),
    ]
    assert lint_config(rules) == []
