"""host.json extensions.queues → the queue trigger's numbers, with the Functions host's defaults."""

from __future__ import annotations

import pytest

from tools.functions_host.trigger_settings import (
    QueueTriggerSettings,
    load_queue_trigger_settings,
    parse_timespan,
    queue_trigger_settings,
)


def test_project_host_json(project_root) -> None:
    settings = load_queue_trigger_settings(project_root / "host.json")
    assert settings == QueueTriggerSettings(
        batch_size=16,
        new_batch_threshold=8,
        max_dequeue_count=5,
        visibility_timeout=30.0,
        max_polling_interval=2.0,
        message_encoding="base64",
    )
    assert settings.max_concurrency == 24


def test_host_defaults_when_absent() -> None:
    assert queue_trigger_settings({"version": "2.0"}) == QueueTriggerSettings(
        batch_size=16,
        new_batch_threshold=8,
        max_dequeue_count=5,
        visibility_timeout=0.0,
        max_polling_interval=60.0,
        message_encoding="base64",
    )


def test_new_batch_threshold_follows_batch_size() -> None:
    settings = queue_trigger_settings({"extensions": {"queues": {"batchSize": 4}}})
    assert (settings.batch_size, settings.new_batch_threshold, settings.max_concurrency) == (4, 2, 6)


@pytest.mark.parametrize(
    "value, seconds",
    [
        ("00:00:30", 30.0),
        ("00:01:00", 60.0),
        ("01:02:03.5", 3723.5),
        ("1.00:00:01", 86401.0),
        (2000, 2.0),
        (0, 0.0),
    ],
)
def test_parse_timespan(value, seconds) -> None:
    assert parse_timespan(value) == seconds


@pytest.mark.parametrize(
    "queues, problem",
    [
        ({"batchSize": 64}, "batchSize must be an integer from 1 to 32, got 64"),
        ({"batchSize": "16"}, "batchSize must be an integer from 1 to 32, got '16'"),
        ({"maxDequeueCount": 0}, "maxDequeueCount must be an integer from 1"),
        ({"visibilityTimeout": "30s"}, "visibilityTimeout: invalid duration '30s'"),
        ({"maxPollingInterval": -5}, "maxPollingInterval: invalid duration -5"),
        ({"messageEncoding": "utf8"}, "messageEncoding must be 'base64' or 'none'"),
    ],
)
def test_invalid_values_name_the_setting(queues, problem) -> None:
    with pytest.raises(ValueError, match=problem.replace("(", r"\(")):
        queue_trigger_settings({"extensions": {"queues": queues}})
