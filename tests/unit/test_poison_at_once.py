"""An unknown-type rejection goes to the poison queue at once, naming the rules that produce the type."""

import json
import logging

from olparser.adapters.catalog import CatalogRejected, CatalogUnavailable
from olparser.adapters.delivery.poison import UnknownType, classify, poison_at_once, unknown_type_name
from olparser.adapters.delivery.queues import SqliteQueueService
from olparser.adapters.rules_file import ReloadingEngine
from tests.support.poison_runtime import RULE_LIST, RULES, UNKNOWN, Runtime


def test_the_type_name_is_read_from_the_rejection():
    assert unknown_type_name(UNKNOWN) == "kafka_topic_made_up"
    assert unknown_type_name(CatalogRejected(400, "ATLAS-400-00-014", "something else")) == "?"
    assert unknown_type_name(CatalogRejected(404, "ATLAS-404-00-00A", "Referenced entity is not found")) is None
    assert unknown_type_name(CatalogUnavailable("throttled", status=429)) is None
    assert unknown_type_name(ValueError("Type ENTITY with name x does not exist")) is None


def test_the_rules_that_produce_the_type_are_named():
    assert classify(UNKNOWN, RULES.rules) == UnknownType("kafka_topic_made_up", ("kafkaTopic", "kafkaCompacted"))
    assert UnknownType("kafka_topic_made_up", ("kafkaTopic",)).describe() == (
        "the catalog has no entity type 'kafka_topic_made_up' (produced by mapping rule(s) 'kafkaTopic')"
    )
    assert UnknownType("databricks_job", ()).describe() == (
        "the catalog has no entity type 'databricks_job' (no mapping rule produces it (one of the connector's own "
        "types from olparser/lineage/typedefs?))"
    )


def test_an_unknown_type_is_written_unchanged_to_the_poison_queue_with_one_error_line(tmp_path, caplog):
    service = SqliteQueueService(tmp_path / "queues.sqlite3")
    text = json.dumps({"v": 1, "id": "envelope-1", "runId": "run-1"})
    with caplog.at_level(logging.ERROR, logger="olparser.adapters.delivery.poison"):
        assert poison_at_once(Runtime(service), "lineage-events", text, UNKNOWN, "run-1") is True
    [message] = service.queue("lineage-events-poison").receive(32, 30)
    assert message.text == text
    assert service.queue("lineage-events").approximate_count() == 0
    assert [r.getMessage() for r in caplog.records] == [
        "runId=run-1 moved to lineage-events-poison at once, as no retry can fix it: the catalog has no entity type "
        "'kafka_topic_made_up' (produced by mapping rule(s) 'kafkaTopic', 'kafkaCompacted'). Add the type to the "
        "catalog or change the rule (check with `qn-tester lint --catalog`), then `ol2purview requeue`"
    ]
    service.close()


def test_other_failures_are_left_to_the_queue_retries(tmp_path):
    service = SqliteQueueService(tmp_path / "queues.sqlite3")
    for failure in (
        CatalogUnavailable("down", status=503),
        CatalogRejected(404, "ATLAS-404-00-00A", "gone"),
        RuntimeError("bug"),
    ):
        assert poison_at_once(Runtime(service), "lineage-events", "text", failure) is False
    assert service.queue("lineage-events-poison").approximate_count() == 0
    service.close()


def test_a_rule_fixed_since_the_event_was_mapped_means_a_retry_not_the_poison_queue(tmp_path, caplog):
    """Issue 36: `requeue` right after fixing the rule sent messages back to the poison queue, naming no rule (the
    new rules no longer produce the type). The rules that mapped the event are named, and when the file has changed
    since, the event is retried (mapped again with the new rules) instead."""
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(RULE_LIST))
    engine = ReloadingEngine(path, check_seconds=3600)  # only `refresh` looks at the file in this test
    service = SqliteQueueService(tmp_path / "queues.sqlite3")

    class Reloading(Runtime):
        def engine(self) -> ReloadingEngine:
            return engine

    mapped = engine.current
    fixed = [dict(RULE_LIST[0], purviewDataType="kafka_topic"), *RULE_LIST[1:]]
    path.write_text(json.dumps(fixed, indent=1))  # another size: a change whatever the file system's time tick
    with caplog.at_level(logging.WARNING, logger="olparser.adapters.delivery.poison"):
        assert poison_at_once(Reloading(service), "lineage-events", "text", UNKNOWN, "run-1", mapped) is False
    assert service.queue("lineage-events-poison").approximate_count() == 0
    assert [r.getMessage() for r in caplog.records if r.name.endswith("poison")] == [
        "runId=run-1: the catalog has no entity type 'kafka_topic_made_up' (produced by mapping rule(s) "
        "'kafkaTopic', 'kafkaCompacted'), but the mapping rules have changed since it was mapped: retried with the "
        "new rules instead of moved to the poison queue"
    ]
    assert engine.reloads == 1
    # mapped with the rules in force now: poisoned, naming the rules that mapped it
    assert poison_at_once(Reloading(service), "lineage-events", "text", UNKNOWN, "run-2", engine.current) is True
    service.close()
