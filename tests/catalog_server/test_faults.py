"""Fault specs: parsing, reproducible draws, outages."""

from __future__ import annotations

import pytest

from tools.catalog.faults import Fault, FaultInjector, FaultSpec, parse_fault_spec


def test_parse_full_spec() -> None:
    spec = parse_fault_spec("429:0.2, 503:0.1,reset:0.05,latency:50ms,retry-after:2,seed:7")
    assert spec == FaultSpec(
        outcomes=(("429", 0.2), ("503", 0.1), ("reset", 0.05)),
        latency_seconds=0.05,
        retry_after_seconds=2,
        seed=7,
        down=None,
    )
    assert str(spec) == "429:0.2,503:0.1,reset:0.05,latency:50ms,retry-after:2,seed:7"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", FaultSpec()),
        ("none", FaultSpec()),
        ("down", FaultSpec(down="503")),
        ("down:reset", FaultSpec(down="reset")),
        ("latency:0.2s", FaultSpec(latency_seconds=0.2)),
        ("latency:30", FaultSpec(latency_seconds=0.03)),
    ],
)
def test_parse_simple_specs(text: str, expected: FaultSpec) -> None:
    assert parse_fault_spec(text) == expected


@pytest.mark.parametrize(
    "text, bad",
    [
        ("429:1.5", "429:1.5"),
        ("teapot:0.1", "teapot:0.1"),
        ("302:0.1", "302:0.1"),
        ("latency:fast", "latency:fast"),
        ("down:maybe", "down:maybe"),
    ],
)
def test_bad_items_are_named(text: str, bad: str) -> None:
    with pytest.raises(ValueError, match=f"bad fault spec item '{bad}'"):
        parse_fault_spec(text)


def test_probabilities_over_one_are_refused() -> None:
    with pytest.raises(ValueError, match="add up to more than 1"):
        parse_fault_spec("429:0.7,503:0.6")


def test_seeded_draws_repeat_and_follow_the_probabilities() -> None:
    spec = parse_fault_spec("429:0.25,reset:0.25,seed:42")
    first = [FaultInjector(spec).draw() for _ in range(1)]
    injector_a, injector_b = FaultInjector(spec), FaultInjector(spec)
    draws_a = [injector_a.draw() for _ in range(2000)]
    assert draws_a == [injector_b.draw() for _ in range(2000)]
    assert draws_a[0] == first[0]
    throttled = sum(1 for d in draws_a if d.status == 429)
    resets = sum(1 for d in draws_a if d.reset)
    assert 400 < throttled < 600 and 400 < resets < 600
    assert all(d.retry_after_seconds == 1 for d in draws_a)


def test_down_refuses_everything_and_can_be_lifted() -> None:
    injector = FaultInjector(parse_fault_spec("down,retry-after:3"))
    assert {injector.draw() for _ in range(20)} == {Fault(status=503, retry_after_seconds=3)}
    injector.configure(parse_fault_spec(""))
    assert injector.draw() == Fault()
