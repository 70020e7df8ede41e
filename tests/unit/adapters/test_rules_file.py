"""A changed rule file is used without a restart; an invalid one keeps the previous rules (adapters/rules_file.py)."""
import json
import logging
import os

from olparser.naming import MappingEngine
from olparser.adapters.rules_file import ReloadingEngine
from olparser.adapters.runtime import Runtime
from olparser.settings import Settings

NS, NAME = "kafka://broker:9092", "orders"


def rules(template: str, type_name: str = "kafka_topic") -> str:
    return json.dumps([{"name": "kafka", "parserConditions": [{"op1": "prefix", "compare": "=", "op2": "kafka"}],
                        "qualifiedName": template, "purviewDataType": type_name}])


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def rewrite(path, text: str) -> None:
    """Write a new version with a later modification time (file systems may keep one mtime within a tick)."""
    before = os.stat(path).st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


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
    assert caplog.records[0].getMessage().startswith(
        f"mapping rules in {path} changed but cannot be used, so the previous rules stay in force: ")
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
