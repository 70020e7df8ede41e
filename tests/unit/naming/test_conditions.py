"""Each condition operator, on present and missing tokens."""

from __future__ import annotations

import pytest

from olparser.naming.conditions import ConditionError, compile_condition
from olparser.naming.tokens import tokenize_name, tokenize_namespace

NS = "sqlserver://MyWs.sql.AzureSynapse.net:1433;database=SQLPool1;"
NAME = "sales.region"


def holds(op1: str, compare: str, op2: object, namespace: str = NS, name: str = NAME) -> bool:
    cond = compile_condition(op1, compare, op2)
    ns, nm = tokenize_namespace(namespace), tokenize_name(name)
    fast = cond.check(ns, nm, None)
    _value, explained, _why = cond.explain(ns, nm, None)
    assert fast == explained, "map and explain must agree"
    return fast


@pytest.mark.parametrize(
    "op1, compare, op2, expected",
    [
        ("prefix", "=", "sqlserver", True),
        ("prefix", "=", "SQLSERVER", False),
        ("prefix", "=", ["abfss", "sqlserver"], True),
        ("prefix", "=", ["abfss", "wasbs"], False),
        ("prefix", "!=", "sqlserver", False),
        ("prefix", "!=", "abfss", True),
        ("prefix", "!=", ["abfss", "wasbs"], True),
        ("nameSpcBodyParts[0]", "contains", "AzureSynapse", True),
        ("nameSpcBodyParts[0]", "contains", "azuresynapse", False),
        ("nameSpcBodyParts[0]", "contains", ["x", "sql."], True),
        ("nameSpcBodyParts[0]", "icontains", "azuresynapse", True),
        ("nameSpcBodyParts[0]", "icontains", ["nope", "AZURESYNAPSE"], True),
        ("nameSpcBodyParts[0]", "notcontains", "database", True),
        ("nameSpcBodyParts[0]", "notcontains", ["database", "Synapse"], False),
        ("nameSpcBodyParts[0]", "startswith", "MyWs.", True),
        ("nameSpcBodyParts[0]", "startswith", ["a", "b"], False),
        ("nameSpcBodyParts[0]", "endswith", ".net", True),
        ("nameSpcBodyParts[0]", "endswith", ".com", False),
        ("nameSpcBodyParts[0]", "contains-in", "nope|AzureSynapse|x", True),
        ("nameSpcBodyParts[0]", "contains-in", "nope|x", False),
        ("nameGroups[0].parts", ">", "1", True),
        ("nameGroups[0].parts", ">", 2, False),
        ("nameGroups[0].parts", "<", 3, True),
        ("nameGroups[0].parts", "<", "2", False),
        ("nameGroups", "=", "1", True),
        ("nameGroups", "=", 1, True),
        ("nameSpcBodyParts[1]", ">", 1000, True),
        ("nameSpcBodyParts[0]", ">", 1, False),
        ("nameSpcNameVals['database']", "=", "SQLPool1", True),
    ],
)
def test_operators(op1, compare, op2, expected):
    assert holds(op1, compare, op2) is expected


@pytest.mark.parametrize(
    "compare", ["=", "!=", "contains", "notcontains", "icontains", "startswith", "endswith", "contains-in", ">", "<"]
)
def test_a_condition_reading_a_missing_token_is_false_for_every_operator(compare):
    op2 = "1" if compare in (">", "<") else "zzz"
    assert holds("nameSpcNameVals['nope']", compare, op2) is False
    assert holds("nameGroups[3].parts[0]", compare, op2) is False


def test_explain_says_why_a_token_is_missing():
    cond = compile_condition("nameSpcBodyParts[7]", "=", "x")
    assert cond.explain(tokenize_namespace(NS), tokenize_name(NAME), None) == (
        None,
        False,
        "nameSpcBodyParts[7] does not exist",
    )


@pytest.mark.parametrize(
    "op1, compare, op2, field, message",
    [
        ("nameGroups", ">", "two", "op2", "'two' is not a number"),
        ("nameGroups", "<", ["1"], "op2", "takes one number"),
        ("nameGroup", "=", "x", "op1", "unknown token 'nameGroup'"),
        ("prefix", "~", "x", "compare", "unknown operator '~'"),
    ],
)
def test_bad_conditions_name_the_field(op1, compare, op2, field, message):
    with pytest.raises(ConditionError, match=message) as info:
        compile_condition(op1, compare, op2)
    assert info.value.field == field
