"""Retries over real loopback HTTP: which failures are retried, how long each wait is, when it gives up."""

from __future__ import annotations

import random
from datetime import datetime, timezone

import pytest
from pyapacheatlas.core import AtlasClient
from pyapacheatlas.core.util import AtlasException

from olparser.adapters.catalog import CatalogRejected, CatalogTarget, CatalogUnavailable, make_atlas_client
from olparser.adapters.catalog.retry import RetryPolicy, retry_after_seconds

from .atlas_stub import Fault

BUSY = {"errorCode": "ATLAS-429-00-001", "errorMessage": "Too many requests"}


def test_429_waits_for_retry_after_seconds_then_succeeds(atlas, client, policy, fake_time):
    atlas.put("hive_table", "db.t@cluster")
    atlas.faults.append(Fault(429, {"Retry-After": "2"}, BUSY))
    calls = [0]
    found = policy.run("lookup", lambda: client.find_entities("hive_table", ["db.t@cluster"]), calls)
    assert [e["attributes"]["qualifiedName"] for e in found] == ["db.t@cluster"]
    assert fake_time.sleeps == [2.0]
    assert calls == [2]
    assert len(atlas.requests) == 2


def test_retry_after_ms_from_azure_takes_precedence(atlas, client, policy, fake_time):
    atlas.faults.append(Fault(429, {"Retry-After": "9", "x-ms-retry-after-ms": "1500"}, BUSY))
    policy.run("lookup", lambda: client.find_entities("hive_table", ["x"]))
    assert fake_time.sleeps == [1.5]


def test_retry_after_is_capped_at_max_wait(atlas, client, policy, fake_time):
    atlas.faults.append(Fault(429, {"Retry-After": "3600"}, BUSY))
    policy.run("lookup", lambda: client.find_entities("hive_table", ["x"]))
    assert fake_time.sleeps == [30.0]


def test_retry_after_http_date():
    now = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc).timestamp()
    assert retry_after_seconds({"Retry-After": "Wed, 01 May 2024 12:00:07 GMT"}, now) == 7.0
    assert retry_after_seconds({"retry-after": "Wed, 01 May 2024 11:59:00 GMT"}, now) == 0.0
    assert retry_after_seconds({"Retry-After": "soon"}, now) is None
    assert retry_after_seconds({}, now) is None


def test_5xx_and_408_back_off_exponentially_then_succeed(atlas, client, policy, fake_time):
    atlas.faults += [Fault(503, body={"error": "busy"}), Fault(408), Fault(500)]
    calls = [0]
    policy.run("lookup", lambda: client.find_entities("hive_table", ["x"]), calls)
    assert fake_time.sleeps == [0.5, 1.0, 2.0]
    assert calls == [4]


class MinRandom(random.Random):
    def uniform(self, a: float, b: float) -> float:
        return a


def test_jitter_keeps_half_of_the_delay():
    policy = RetryPolicy(initial_wait=1.0, max_wait=30.0, rng=MinRandom())
    assert [policy.backoff(n, None) for n in (1, 2, 3, 7)] == [0.5, 1.0, 2.0, 15.0]


def test_connection_reset_is_retried(atlas, client, policy, fake_time):
    atlas.faults.append(Fault(reset=True))
    calls = [0]
    assert policy.run("lookup", lambda: client.find_entities("hive_table", ["x"]), calls) == []
    assert calls == [2]
    assert fake_time.sleeps == [0.5]


def test_timeout_is_retried_then_unavailable(atlas, fake_time):
    client = make_atlas_client(CatalogTarget("atlas", atlas.atlas_url), timeout=0.2)
    atlas.faults += [Fault(delay=1.0), Fault(delay=1.0)]
    policy = RetryPolicy(max_attempts=2, sleep=fake_time.sleep, clock=fake_time.clock)
    with pytest.raises(CatalogUnavailable) as raised:
        policy.run("lookup", lambda: client.find_entities("hive_table", ["x"]))
    assert raised.value.attempts == 2
    assert "unreachable after 2 attempts: ReadTimeout" in str(raised.value)
    client.close()


def test_400_is_not_retried(atlas, client, policy, fake_time):
    atlas.faults.append(
        Fault(
            400,
            body={
                "errorCode": "ATLAS-400-00-014",
                "errorMessage": "Type bogus_type with name bogus_type does not exist",
            },
        )
    )
    calls = [0]
    with pytest.raises(CatalogRejected) as raised:
        policy.run("bulk upsert", lambda: client.upload_bulk([]), calls)
    assert (raised.value.status, raised.value.error_code) == (400, "ATLAS-400-00-014")
    assert raised.value.message == "Type bogus_type with name bogus_type does not exist"
    assert calls == [1]
    assert fake_time.sleeps == []


def test_gives_up_after_max_attempts(atlas, client, policy, fake_time):
    atlas.faults += [Fault(503, {"Retry-After": "1"})] * 5
    with pytest.raises(CatalogUnavailable) as raised:
        policy.run("bulk upsert", lambda: client.upload_bulk([]))
    assert len(atlas.requests) == 4
    assert fake_time.sleeps == [1.0, 1.0, 1.0]
    assert (raised.value.status, raised.value.retry_after, raised.value.attempts) == (503, 1.0, 4)
    assert str(raised.value) == "catalog bulk upsert kept failing after 4 attempts: 503"


def test_gives_up_when_the_next_wait_would_exceed_the_time_budget(atlas, client, fake_time):
    policy = RetryPolicy(max_attempts=10, max_total_seconds=60.0, sleep=fake_time.sleep, clock=fake_time.clock)
    atlas.faults += [Fault(429, {"Retry-After": "25"}, BUSY)] * 5
    with pytest.raises(CatalogUnavailable):
        policy.run("lookup", lambda: client.find_entities("hive_table", ["x"]))
    assert fake_time.sleeps == [25.0, 25.0]  # a third wait would end at 75s > 60s
    assert len(atlas.requests) == 3


def test_atlas_exception_from_plain_pyapacheatlas_is_translated(atlas, policy, fake_time):
    plain = AtlasClient(atlas.atlas_url, requests_timeout=5)  # no hook: pyapacheatlas raises AtlasException
    atlas.faults.append(
        Fault(404, body={"errorCode": "ATLAS-404-00-00A", "errorMessage": "Referenced entity -7 is not found"})
    )
    with pytest.raises(CatalogRejected) as raised:
        policy.run("bulk upsert", lambda: plain.upload_entities({"entities": []}))
    assert (raised.value.status, raised.value.error_code) == (404, "ATLAS-404-00-00A")
    assert raised.value.message == "Referenced entity -7 is not found"


def test_atlas_exception_with_a_5xx_code_is_retried(policy, fake_time):
    answers = [AtlasException('{"errorCode": "ATLAS-500-00-001", "errorMessage": "Internal server error"}'), "ok"]

    def operation():
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    assert policy.run("lookup", operation) == "ok"
    assert fake_time.sleeps == [0.5]
