"""Rule order, fall-through on missing tokens, config shapes and sources, explain agreeing with map."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from olparser.naming import ConfigError, MappingEngine, MappingResult, MountPoint
from olparser.settings import Settings
from tests.support.rules import rule

RULES = [
    rule(
        "sqlNonDbo",
        [("prefix", "=", "sqlserver"), ("nameGroups[0].parts", ">", 1)],
        "mssql://{nameSpcBodyParts[0]}/{nameSpcNameVals['database']}/{nameGroups[0].parts[0]}/{nameGroups[0].parts[1]}",
        "sql",
    ),
    rule(
        "sql",
        [("prefix", "=", "sqlserver")],
        "mssql://{nameSpcBodyParts[0]}/{nameSpcNameVals['database']}/dbo/{nameGroups[0]}",
        "sql",
    ),
    rule(
        "sqlNoDatabase",
        [("prefix", "=", "sqlserver")],
        "mssql://{nameSpcBodyParts[0]}/unknown/{nameGroups[0]}",
        "sql_fallback",
    ),
    rule("anything", [], "other://{prefix}", "generic"),
]


@pytest.fixture
def engine() -> MappingEngine:
    return MappingEngine.from_rules(RULES)


def test_first_matching_rule_wins(engine):
    assert engine.map("sqlserver://h;database=d", "s.t") == MappingResult("mssql://h/d/s/t", "sql", "sqlNonDbo")
    assert engine.map("sqlserver://h;database=d", "t") == MappingResult("mssql://h/d/dbo/t", "sql", "sql")


def test_a_template_reading_a_missing_token_passes_to_the_next_rule(engine):
    assert engine.map("sqlserver://h:1433", "t") == MappingResult(
        "mssql://h/unknown/t", "sql_fallback", "sqlNoDatabase"
    )


def test_a_rule_without_conditions_always_holds(engine):
    assert engine.map("kafka://broker:9092", "topic") == MappingResult("other://kafka", "generic", "anything")


def test_unmatched_is_a_result_with_an_error_not_an_exception():
    engine = MappingEngine.from_rules(RULES[:2])
    result = engine.map("kafka://broker:9092", "topic")
    assert not result.matched
    assert (result.qualified_name, result.purview_type, result.rule_name) == (None, None, None)
    assert result.error == (
        "no mapping rule matched (namespace prefix 'kafka', 2 rules tried); Kafka (also Event "
        "Hubs' Kafka endpoint): no Purview scanner registers it, so it stays a placeholder (see "
        "docs/guides/producers-and-names.md)"
    )


def test_unmatched_error_names_the_rule_whose_template_lacked_a_token():
    engine = MappingEngine.from_rules(
        [rule("hive", [("prefix", "=", "dbfs")], "{nameGroups[0]}@{AdbWorkspaceUrl}", "hive_table")]
    )
    result = engine.map("dbfs", "/t")
    assert result.error == (
        "no mapping rule matched (namespace prefix 'dbfs', 1 rules tried); the conditions of rule 'hive' held "
        "but its template reads AdbWorkspaceUrl, which is missing"
    )


@pytest.mark.parametrize(
    "namespace, name", [("", ""), (None, None), (42, ["x"]), ("::://", "[[["), ("x://" + "/" * 50, "]")]
)
def test_map_never_raises_on_odd_input(default_engine, namespace, name):
    assert default_engine.map(namespace, name).matched is False


def test_workspace_url_accepts_a_url_form():
    engine = MappingEngine.from_rules([rule("hive", [], "t@{AdbWorkspaceUrl}")])
    assert (
        engine.map("dbfs", "t", workspace_url="https://adb-1.2.azuredatabricks.net/").qualified_name
        == "t@adb-1.2.azuredatabricks.net"
    )


def test_results_do_not_leak_between_namespaces_through_the_plan_cache(engine):
    assert engine.map("sqlserver://a;database=x", "t").qualified_name == "mssql://a/x/dbo/t"
    assert engine.map("sqlserver://b;database=y", "t").qualified_name == "mssql://b/y/dbo/t"
    assert engine.map("sqlserver://a;database=x", "s.t").qualified_name == "mssql://a/x/s/t"


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(RULES),
        json.dumps({"olToPurviewMappings": RULES}),
        json.dumps({"OlToPurviewMappings": RULES}),
        json.dumps({"rules": RULES}),
    ],
)
def test_every_accepted_config_shape_loads(text):
    assert MappingEngine.from_json_text(text).map("sqlserver://h;database=d", "t").rule_name == "sql"


def test_from_path_reads_a_file_with_a_bom(tmp_path: Path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(RULES), encoding="utf-8-sig")
    assert MappingEngine.from_path(path).map("x://y", "z").rule_name == "anything"


def test_from_settings_prefers_the_inline_app_setting(tmp_path: Path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(RULES[:1]))
    inline = json.dumps({"OlToPurviewMappings": RULES[3:]})
    assert (
        MappingEngine.from_settings(Settings(mappings_inline=inline, mappings_path=path)).map("x://y", "z").rule_name
        == "anything"
    )
    assert (
        MappingEngine.from_settings(Settings(mappings_inline=None, mappings_path=path)).map("x://y", "z").matched
        is False
    )


def test_from_settings_reads_the_environment_names(tmp_path: Path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(RULES))
    settings = Settings.from_env({"OL_TO_PURVIEW_MAPPINGS_PATH": str(path)})
    assert MappingEngine.from_settings(settings).map("x://y", "z").rule_name == "anything"


def test_inline_setting_errors_say_where_they_come_from():
    with pytest.raises(ConfigError, match="^app setting OlToPurviewMappings: .* is not valid JSON"):
        MappingEngine.from_settings(replace(Settings(), mappings_inline="[{"))


def test_explain_shows_tokens_conditions_and_winner(engine):
    explanation = engine.explain("sqlserver://h:1433", "t")
    assert explanation.result == MappingResult("mssql://h/unknown/t", "sql_fallback", "sqlNoDatabase")
    assert explanation.tokens["prefix"] == "sqlserver"
    assert explanation.tokens["nameSpcBodyParts"] == ["h", "1433"]
    first, second, third = explanation.rules
    assert (first.matched, first.reason) == (
        False,
        "condition failed: nameGroups[0].parts > 1 (nameGroups[0].parts is 1)",
    )
    assert [c.held for c in first.conditions] == [True, False]
    assert second.reason == "conditions held, but the template reads nameSpcNameVals['database'], which does not exist"
    assert (third.matched, third.reason) == (True, "all conditions held")
    text = explanation.to_text()
    assert "winner: sqlNoDatabase -> mssql://h/unknown/t (sql_fallback)" in text
    assert "nameGroups[0].parts > 1: FAILED (nameGroups[0].parts is 1)" in text


def test_explain_marks_conditions_after_a_failure_as_not_evaluated(engine):
    trace = engine.explain("kafka://b", "t").rules[0]
    assert [c.held for c in trace.conditions] == [False, None]


def test_explain_reports_the_mount_used(default_engine):
    mounts = (MountPoint("/mnt/raw/", "abfss://raw@acct.dfs.core.windows.net/"),)
    explanation = default_engine.explain("dbfs", "/mnt/raw/x.parquet", mounts=mounts)
    assert explanation.mount == mounts[0]
    assert (explanation.resolved_namespace, explanation.resolved_name) == (
        "abfss://raw@acct.dfs.core.windows.net",
        "/x.parquet",
    )
    assert explanation.result.qualified_name == "https://acct.dfs.core.windows.net/raw/x.parquet"


@pytest.mark.parametrize(
    "namespace, name",
    [
        ("sqlserver://h.database.windows.net:1433", "db.sales.orders"),
        ("sqlserver://h.database.windows.net:1433", "COMPLEX"),
        ("dbfs", "/user/hive/warehouse/t"),
        ("abfss://c@a.blob.core.windows.net", ""),
        ("kafka://b:9092", "topic"),
    ],
)
def test_explain_agrees_with_map(default_engine, namespace, name):
    assert default_engine.explain(namespace, name).result == default_engine.map(namespace, name)
