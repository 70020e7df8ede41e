"""A changed rule file is used without a restart; an invalid one keeps the previous rules (adapters/rules_file.py)."""

import json
import logging
import os
import subprocess
import threading

from olparser.adapters.rules_file import ReloadingEngine, rules_problem, rules_source
from olparser.adapters.runtime import Runtime
from olparser.naming import MappingEngine
from olparser.naming.rules import rule_offsets
from olparser.settings import CHECKOUT_MAPPINGS_PATH, PACKAGED_MAPPINGS_PATH, PROJECT_ROOT, Settings
from tests.support.rules import BROKEN_RULES, BROKEN_RULES_PROBLEM
from tests.support.waiting import wait_until

NS, NAME = "kafka://broker:9092", "orders"


def rules(template: str, type_name: str = "kafka_topic") -> str:
    return json.dumps(
        [
            {
                "name": "kafka",
                "parserConditions": [{"op1": "prefix", "compare": "=", "op2": "kafka"}],
                "qualifiedName": template,
                "purviewDataType": type_name,
            }
        ]
    )


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def rewrite(path, text: str) -> None:
    """Write a new version with a later modification time (file systems may keep one mtime within a tick), at once
    (a file renamed over it, as editors save): the watcher thread never reads it half written."""
    before = os.stat(path).st_mtime_ns
    staged = path.with_name(path.name + ".new")
    staged.write_text(text)
    os.utime(staged, ns=(before + 1_000_000_000, before + 1_000_000_000))
    os.replace(staged, path)


def test_a_changed_file_is_picked_up_after_the_check_interval(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text(rules("kafka://{nameSpcBodyParts[0]}/{nameGroups[0]}"))
    clock = Clock()
    engine = ReloadingEngine(path, check_seconds=2.0, clock=clock)
    assert engine.map(NS, NAME).qualified_name == "kafka://broker/orders"
    rewrite(path, rules("topics://{nameGroups[0]}", "kafka_topic_v2"))
    clock.now += 1.0
    assert engine.map(NS, NAME).qualified_name == "kafka://broker/orders"  # not looked at yet: at most every 2 s
    clock.now += 1.0
    result = engine.map(NS, NAME)
    assert (result.qualified_name, result.purview_type, engine.reloads) == ("topics://orders", "kafka_topic_v2", 1)
    assert [rule.purview_type for rule in engine.rules] == ["kafka_topic_v2"]


def test_an_invalid_new_file_keeps_the_old_rules_and_logs_why(tmp_path, caplog):
    path = tmp_path / "rules.json"
    path.write_text(rules("kafka://{nameGroups[0]}"))
    clock = Clock()
    engine = ReloadingEngine(path, check_seconds=2.0, clock=clock)
    rewrite(path, "[{\"name\": ")
    clock.now += 5
    with caplog.at_level(logging.ERROR, logger="olparser.adapters.rules_file"):
        assert engine.map(NS, NAME).qualified_name == "kafka://orders"
        clock.now += 5
        assert engine.map(NS, NAME).qualified_name == "kafka://orders"
    assert len(caplog.records) == 1  # once per change, not once per call
    assert (
        caplog.records[0]
        .getMessage()
        .startswith(f"mapping rules in {path} changed but cannot be used, so the previous rules stay in force: ")
    )
    rewrite(path, rules("fixed://{nameGroups[0]}"))
    clock.now += 5
    assert engine.map(NS, NAME).qualified_name == "fixed://orders"


def test_the_runtime_follows_the_rule_file_but_not_inline_rules(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text(rules("kafka://{nameGroups[0]}"))
    assert isinstance(Runtime(Settings(mappings_path=path)).engine(), ReloadingEngine)
    inline = Runtime(Settings(mappings_inline=rules("inline://{nameGroups[0]}"), mappings_path=path)).engine()
    assert isinstance(inline, MappingEngine)
    assert inline.map(NS, NAME).qualified_name == "inline://orders"


# --- fail fast: where a problem is, what status says, the watcher ------------------------------------------------
BROKEN = BROKEN_RULES
COMPARE_ERROR = BROKEN_RULES_PROBLEM.split(": ", 1)[1]


def test_a_rule_problem_names_the_file_line_column_and_rule(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text(BROKEN)
    assert rules_problem(Settings(mappings_path=path)) == f"{path}:4:3: {COMPARE_ERROR}"  # rule 1 starts there
    wrapped = tmp_path / "wrapped.json"  # the object shape, with another key first
    wrapped.write_text('{"comment": [1, {"a": "]"}],\n "olToPurviewMappings": ' + BROKEN + "}")
    assert rules_problem(Settings(mappings_path=wrapped)) == f"{wrapped}:5:3: {COMPARE_ERROR}"
    syntax = tmp_path / "syntax.json"
    syntax.write_text('[\n  {"name": ')
    assert rules_problem(Settings(mappings_path=syntax)) == (
        f"{syntax}:2:12: {syntax} is not valid JSON: Expecting value (line 2, column 12)"
    )
    assert rules_problem(Settings(mappings_path=tmp_path / "none.json")).startswith(
        f"{tmp_path / 'none.json'}: cannot read the mapping rules: "
    )
    assert rules_problem(Settings(mappings_path=path, mappings_inline="[{}]")) == (
        "rule 0: app setting OlToPurviewMappings: 'name' is a required property (and 3 more problem(s))"
    )
    assert rules_problem(Settings(mappings_path=CHECKOUT_MAPPINGS_PATH)) is None


def test_rule_offsets_find_each_rule_of_either_shape():
    text = '[ {"a": 1},\n  {"b": [2, "]"]} ]'
    assert [text[offset : offset + 6] for offset in rule_offsets(text)] == ['{"a": ', '{"b": ']
    assert rule_offsets('{"rules": []}') == [] and rule_offsets("not json") == []


def test_an_invalid_edit_shows_in_status_until_fixed(tmp_path, caplog):
    path = tmp_path / "rules.json"
    path.write_text(rules("kafka://{nameGroups[0]}"))
    clock = Clock()
    engine = ReloadingEngine(path, check_seconds=2.0, clock=clock)
    assert engine.status() == {"ok": True, "path": str(path), "rules": 1, "reloads": 0}
    rewrite(path, BROKEN)
    clock.now += 5
    with caplog.at_level(logging.ERROR, logger="olparser.adapters.rules_file"):
        for _ in range(3):
            assert engine.status() == {
                "ok": False,
                "path": str(path),
                "rules": 1,
                "reloads": 0,
                "error": f"{path}:4:3: {COMPARE_ERROR}",
            }
            clock.now += 5
    assert len(caplog.records) == 1
    assert engine.map(NS, NAME).qualified_name == "kafka://orders"  # the last good rules stay in force
    rewrite(path, rules("fixed://{nameGroups[0]}"))
    clock.now += 5
    assert engine.status() == {"ok": True, "path": str(path), "rules": 1, "reloads": 1}


def test_the_watcher_notices_a_change_with_no_mapping_and_logs_it_once(tmp_path, caplog):
    path = tmp_path / "rules.json"
    path.write_text(rules("kafka://{nameGroups[0]}"))
    engine = ReloadingEngine(path, check_seconds=0.05)
    with caplog.at_level(logging.INFO, logger="olparser.adapters.rules_file"):
        engine.watch()
        engine.watch()  # once: a second call starts no second thread
        try:
            rewrite(path, rules("watched://{nameGroups[0]}"))
            wait_until(lambda: engine.reloads == 1, what="the watcher to reload the rules")
            rewrite(path, BROKEN)
            wait_until(lambda: engine.error is not None, what="the watcher to see the invalid edit")
        finally:
            engine.close()
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        f"mapping rules reloaded from {path} (1 rules)",
        f"mapping rules in {path} changed but cannot be used, so the previous rules stay in force: "
        f"{path}:4:3: {COMPARE_ERROR}",
    ]
    assert sum(t.name == "ol2purview-rules-watcher" for t in threading.enumerate()) <= 1


def test_status_names_a_file_inside_the_app_relative_to_it():
    """The status answer never spells out where the app is installed (CI's checkout lies under /work/, which the
    delivery-security test rightly counts as a leak): the rule file shows as the app-relative path."""
    status = ReloadingEngine(CHECKOUT_MAPPINGS_PATH, check_seconds=2.0).status()
    assert status["path"] == "config/OlToPurviewMappings.json"
    assert status["ok"] is True


def test_every_setting_reads_the_one_rule_file_of_the_checkout_unless_told_otherwise(tmp_path):
    """One rule file (issue 43): in a checkout, the settings of every command (the Function, serve, qn-tester, the
    Spark jobs, demo) name config/OlToPurviewMappings.json; OL_TO_PURVIEW_MAPPINGS_PATH or the inline setting win."""
    assert not PACKAGED_MAPPINGS_PATH.exists()  # only a built wheel holds the packaged copy
    assert CHECKOUT_MAPPINGS_PATH == PROJECT_ROOT / "config" / "OlToPurviewMappings.json"
    # Azure's ARM template sets OL_TO_PURVIEW_MAPPINGS_PATH to "" (deploy/azuredeploy.json): unset, like absent
    for environ in ({}, {"OL_TO_PURVIEW_MAPPINGS_PATH": ""}):
        settings = Settings.from_env(environ)
        assert (settings.mappings_path, rules_source(settings)) == (
            CHECKOUT_MAPPINGS_PATH,
            "config/OlToPurviewMappings.json",
        )
    assert Settings().mappings_path == CHECKOUT_MAPPINGS_PATH
    mine = tmp_path / "mine.json"
    assert rules_source(Settings.from_env({"OL_TO_PURVIEW_MAPPINGS_PATH": str(mine)})) == str(mine)
    assert rules_source(Settings.from_env({"OlToPurviewMappings": "[]"})) == "app setting OlToPurviewMappings"


def test_the_repository_holds_one_rule_file():
    tracked = subprocess.run(
        ["git", "ls-files", "*OlToPurviewMappings*.json"], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert tracked == ["config/OlToPurviewMappings.json"]
