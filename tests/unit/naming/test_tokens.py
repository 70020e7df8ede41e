"""Tokenising namespaces and names, and reading token references, as the reference connector does."""

from __future__ import annotations

import re

import pytest

from olparser.naming.tokens import TokenError, parse_token, tokenize_name, tokenize_namespace


def read(ref: str, namespace: str, name: str = "", workspace: str | None = None):
    return parse_token(ref).read(tokenize_namespace(namespace), tokenize_name(name), workspace)


DOC_NS = "test://part1/part2/part3/part4@mycon.one.two;one=1;two=2/"


def test_documented_example_namespace_tokens():
    ns = tokenize_namespace(DOC_NS)
    assert ns.prefix == "test"
    assert ns.body == ("part1", "part2", "part3", "part4", "mycon.one.two")
    assert ns.con == ("mycon", "one", "two")
    assert ns.vals == {"one": "1", "two": "2"}


def test_documented_example_name_tokens():
    nm = tokenize_name("[myname.test][for.you]")
    assert nm.groups == ("myname.test", "for.you")
    assert nm.parts == (("myname", "test"), ("for", "you"))


@pytest.mark.parametrize(
    "namespace, prefix",
    [
        ("sqlserver://host:1433", "sqlserver"),
        ("jdbc:oracle:thin:@//host:1521/svc", "jdbc:oracle:thin:"),
        ("dbfs", "dbfs"),
        ("unity-catalog", "unity-catalog"),
        ("file:/tmp/warehouse", "file:/tmp/warehouse"),
    ],
)
def test_prefix_is_text_before_double_slash_minus_one_character(namespace, prefix):
    assert tokenize_namespace(namespace).prefix == prefix


def test_namespace_without_double_slash_has_no_body():
    ns = tokenize_namespace("dbfs")
    assert (ns.body, ns.con, ns.vals) == ((), (), {})


def test_question_mark_splits_so_query_parameters_become_key_values():
    ns = tokenize_namespace("postgresql://h.postgres.database.azure.com:5432/maestro-load?sslmode=require")
    assert ns.body == ("h.postgres.database.azure.com", "5432", "maestro-load")
    assert ns.vals == {"sslmode": "require"}


def test_database_name_in_any_case_is_also_stored_as_database():
    ns = tokenize_namespace("sqlserver://h:1433;DatabaseName=sales;encrypt=true;")
    assert ns.vals == {"DatabaseName": "sales", "database": "sales", "encrypt": "true"}
    assert tokenize_namespace("sqlserver://h;Database=x").vals["database"] == "x"


def test_piece_with_two_equals_signs_is_a_body_part():
    assert tokenize_namespace("x://a=b=c;k=").body == ("a=b=c",)
    assert tokenize_namespace("x://a=b=c;k=").vals == {"k": ""}


def test_con_parts_flatten_dotted_body_pieces_only():
    ns = tokenize_namespace("abfss://container@acct.dfs.core.windows.net:443/sub.dir")
    assert ns.con == ("acct", "dfs", "core", "windows", "net", "sub", "dir")


def test_name_without_brackets_is_one_trimmed_group():
    nm = tokenize_name("/user/hive/warehouse/db.db/t/")
    assert nm.groups == ("user/hive/warehouse/db.db/t",)
    assert nm.parts == (("user", "hive", "warehouse", "db", "db", "t"),)


def test_empty_name_is_one_empty_group():
    assert tokenize_name("").groups == ("",)
    assert tokenize_name("/").parts == ((),)


@pytest.mark.parametrize(
    "ref, expected",
    [
        ("prefix", "test"),
        ("nameSpcBodyParts[4]", "mycon.one.two"),
        ("nameSpcBodyParts", 5),
        ("nameSpcBodyParts[-1]", "mycon.one.two"),
        ("nameSpcConParts[1]", "one"),
        ("nameSpcConParts", 3),
        ("nameSpcNameVals['two']", "2"),
        ('nameSpcNameVals["one"]', "1"),
        ("nameSpaceBodyJoinedBySlashFrom[2]", "part3/part4/mycon.one.two"),
        ("nameGroups", 2),
        ("nameGroups[1]", "for.you"),
        ("nameGroups[0].parts", 2),
        ("nameGroups[0].parts[1]", "test"),
        ("nameGroups[-1].parts[-1]", "you"),
        (" nameGroups[ 0 ] ", "myname.test"),
    ],
)
def test_token_references_read_values(ref, expected):
    assert read(ref, DOC_NS, "[myname.test][for.you]") == expected


@pytest.mark.parametrize(
    "ref",
    [
        "nameSpcBodyParts[9]",
        "nameSpcConParts[-9]",
        "nameSpcNameVals['missing']",
        "nameSpaceBodyJoinedBySlashFrom[5]",
        "nameGroups[2]",
        "nameGroups[5].parts",
        "nameGroups[0].parts[7]",
        "AdbWorkspaceUrl",
    ],
)
def test_missing_tokens_read_as_none(ref):
    assert read(ref, DOC_NS, "[myname.test][for.you]") is None


def test_workspace_url_token_reads_the_call_argument():
    assert read("AdbWorkspaceUrl", "dbfs", "", "adb-1.2.azuredatabricks.net") == "adb-1.2.azuredatabricks.net"


@pytest.mark.parametrize(
    "ref, message",
    [
        ("nameSpcBodyPart[0]", "unknown token 'nameSpcBodyPart'"),
        ("prefix[0]", "prefix takes no index"),
        ("nameSpcNameVals[0]", "takes a ['key']"),
        ("nameSpcBodyParts['k']", "only nameSpcNameVals takes a ['key']"),
        ("nameSpcBodyParts[0].parts", "only nameGroups[i] has .parts"),
        ("nameGroups.parts", ".parts needs a group index"),
        ("nameSpaceBodyJoinedBySlashFrom", "needs an index"),
        ("nameSpcBodyParts[0]nameSpcNameVals['databaseName']", "is not a token reference"),
        ("", "is not a token reference"),
    ],
)
def test_bad_references_name_the_problem(ref, message):
    with pytest.raises(TokenError, match=re.escape(message)):
        parse_token(ref)
