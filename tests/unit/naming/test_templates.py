"""The template grammar: placeholders, escapes, errors, trimming and normalisation."""

from __future__ import annotations

import re

import pytest

from olparser.naming.templates import TemplateError, parse_template
from olparser.naming.tokens import tokenize_name, tokenize_namespace


def render(template: str, namespace: str, name: str, normalize: tuple[str, ...] = (), workspace: str | None = None):
    return parse_template(template, normalize).render(tokenize_namespace(namespace), tokenize_name(name), workspace)


def test_placeholders_fill_from_tokens():
    ns = "abfss://raw@acct.dfs.core.windows.net"
    assert render("https://{nameSpcBodyParts[1]}/{nameSpcBodyParts[0]}/{nameGroups[0]}", ns, "/a/b") == (
        "https://acct.dfs.core.windows.net/raw/a/b"
    )


def test_trailing_slashes_are_trimmed_after_filling_but_leading_space_is_kept():
    assert render(" {prefix}/{nameGroups[0]}//", "x://h", "") == " x"


def test_doubled_braces_are_literal_braces():
    assert render("{{{prefix}}}-}}{{", "x://h", "n") == "{x}-}{"


def test_text_without_placeholders_is_literal():
    assert render("plain text", "x://h", "n") == "plain text"


def test_missing_token_makes_the_template_yield_none():
    assert render("{nameSpcNameVals['database']}/{nameGroups[0]}", "x://h", "n") is None
    assert render("{nameGroups[0]}@{AdbWorkspaceUrl}", "dbfs", "t") is None
    assert render("{nameGroups[0]}@{AdbWorkspaceUrl}", "dbfs", "t", workspace="adb-1.1.azuredatabricks.net") == (
        "t@adb-1.1.azuredatabricks.net"
    )


def test_list_tokens_render_as_their_length():
    assert render("{nameGroups}:{nameGroups[0].parts}", "x://h", "a.b.c") == "1:3"


@pytest.mark.parametrize(
    "template, message",
    [
        ("https://{prefix", "unclosed '{' at position 8"),
        ("a}b", "unmatched '}' at position 1"),
        ("{pre{fix}", "'{' inside a placeholder at position 4"),
        ("x/{nameGroupz[0]}", "placeholder at position 2: unknown token 'nameGroupz'"),
        ("{}", "placeholder at position 0"),
        ("{nameSpcBodyParts[0]nameSpcNameVals['databaseName']}", "is not a token reference"),
    ],
)
def test_template_errors_name_the_position_and_problem(template, message):
    with pytest.raises(TemplateError, match=re.escape(message)):
        parse_template(template)


@pytest.mark.parametrize(
    "steps, expected",
    [
        ((), "HTTPS://Acct.DFS.core.windows.net/Raw/Data//File"),
        (("lowercaseSchemeHost",), "https://acct.dfs.core.windows.net/Raw/Data//File"),
        (("collapseSlashes",), "HTTPS://Acct.DFS.core.windows.net/Raw/Data/File"),
        (("lowercaseSchemeHost", "collapseSlashes"), "https://acct.dfs.core.windows.net/Raw/Data/File"),
        (("lowercase",), "https://acct.dfs.core.windows.net/raw/data//file"),
    ],
)
def test_normalize_steps(steps, expected):
    assert (
        render(
            "HTTPS://{nameSpcBodyParts[1]}/Raw/{nameGroups[0]}",
            "abfss://c@Acct.DFS.core.windows.net",
            "/Data//File",
            steps,
        )
        == expected
    )


def test_collapse_slashes_without_a_scheme():
    assert render("{nameGroups[0]}", "x://h", "a//b", ("collapseSlashes",)) == "a/b"
