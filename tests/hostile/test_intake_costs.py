"""Intake answers each hostile payload of issue #15 within 10x the work of an honest event of the same size (lines of
olparser/ run, counted: tests/support/hostile_work.py), with the status the README's Limits table promises; gzip
bodies by the members inflated and the compressed bytes offered to zlib, counted."""

from __future__ import annotations

import pytest

from olparser.contract import IntakeLimits, read_event
from olparser.contract.body import GZIP_INPUT_CHUNK
from tests.support.hostile_work import answer, within_bound, work
from tests.support.work_count import counted_inflation
from tools.samples import hostile as payloads
from tools.samples.hostile import OVER_LIMITS, OverLimit, body

# Limits raised far past their defaults, to show that intake stays linear even where a limit does not refuse.
RAISED = IntakeLimits(
    max_datasets_per_event=100_000, max_facets_per_event=1_000_000, max_mount_points=100_000, max_gzip_members=1_000_000
)


def test_names_of_four_thousand_brackets_are_accepted_within_the_bound(honest_intake_lines_per_kib: float) -> None:
    data = body(payloads.bracket_names_event())
    assert answer(data) == (200, "")
    assert within_bound(lambda: read_event(data, {}, IntakeLimits()), len(data), honest_intake_lines_per_kib)


def test_fifteen_thousand_mounts_and_inputs_are_refused_by_the_dataset_limit(
    honest_intake_lines_per_kib: float,
) -> None:
    data = body(payloads.mounts_event())
    assert answer(data) == (
        413,
        "the event has 15,001 datasets in inputs and outputs, more than the limit of 1,000 "
        "(setting MAX_DATASETS_PER_EVENT)",
    )
    assert within_bound(lambda: answer(data), len(data), honest_intake_lines_per_kib)


def test_fifteen_thousand_mounts_pass_a_raised_limit_within_the_bound(honest_intake_lines_per_kib: float) -> None:
    data = body(payloads.mounts_event())
    assert answer(data, RAISED) == (200, "")
    assert within_bound(lambda: answer(data, RAISED), len(data), honest_intake_lines_per_kib)


def test_four_hundred_thousand_empty_gzip_members_are_refused_at_once() -> None:
    data = payloads.empty_gzip_members_body(400_000)
    assert answer(data) == (
        400,
        "body has more than 64 gzip members, more than the limit of 64 (setting MAX_GZIP_MEMBERS)",
    )
    with counted_inflation() as inflated:
        lines = work(lambda: answer(data))
    # the 65th member is refused before it is inflated: 64 members read, none of the other 399,936 looked at
    assert (inflated.members, inflated.produced) == (64, 0)
    assert inflated.offered <= 64 * GZIP_INPUT_CHUNK
    assert lines < 2_000, lines  # about 16 lines a member, whatever the body's size


def test_gzip_members_cost_linear_time_past_a_raised_limit(honest_intake_lines_per_kib: float) -> None:
    """Before: each member copied the rest of the body (quadratic, 55 s for 400,000). Now a member costs at most one
    64 KiB chunk offered to zlib."""
    data = payloads.empty_gzip_members_body(100_000)
    with counted_inflation() as inflated:
        assert answer(data, RAISED) == (200, "")
    assert inflated.members == 100_001  # the empty ones, then the event
    assert inflated.offered <= inflated.members * GZIP_INPUT_CHUNK  # the rest of the body each time: 100 GB
    assert within_bound(lambda: answer(data, RAISED), len(data), honest_intake_lines_per_kib)


def test_six_hundred_thousand_malformed_facets_are_refused_by_the_facet_limit(
    honest_intake_lines_per_kib: float,
) -> None:
    data = body(payloads.malformed_facets_event())
    assert answer(data) == (
        413,
        "the event has 600,000 facets, more than the limit of 10,000 (setting MAX_FACETS_PER_EVENT)",
    )
    assert within_bound(lambda: answer(data), len(data), honest_intake_lines_per_kib)


def test_six_hundred_thousand_malformed_facets_past_a_raised_limit_are_dropped_within_the_bound(
    honest_intake_lines_per_kib: float,
) -> None:
    data = body(payloads.malformed_facets_event())
    accepted = read_event(data, {}, RAISED)
    assert accepted.event["run"]["facets"] == {}
    assert accepted.warnings[-1] == "dropped 599,980 more malformed facets"
    assert within_bound(lambda: read_event(data, {}, RAISED), len(data), honest_intake_lines_per_kib)


def test_malformed_facets_the_connector_reads_cost_one_first_error_each(honest_intake_lines_per_kib: float) -> None:
    data = body(payloads.malformed_read_facets_event())
    accepted = read_event(data, {}, IntakeLimits())
    assert all(output["facets"] == {} for output in accepted.event["outputs"])
    assert accepted.warnings[-1] == "dropped 2,680 more malformed facets"
    assert within_bound(lambda: read_event(data, {}, IntakeLimits()), len(data), honest_intake_lines_per_kib)


@pytest.mark.parametrize("inputs, outputs, count", [(600, 600, "1,200"), (2_000, 1_500, "3,500")])
def test_inputs_times_outputs_are_refused_at_intake(
    inputs: int, outputs: int, count: str, honest_intake_lines_per_kib: float
) -> None:
    data = body(payloads.inputs_outputs_event(inputs, outputs))
    assert answer(data) == (
        413,
        f"the event has {count} datasets in inputs and outputs, more than the limit of "
        "1,000 (setting MAX_DATASETS_PER_EVENT)",
    )
    assert within_bound(lambda: answer(data), len(data), honest_intake_lines_per_kib)


def test_a_run_dated_9999_is_clamped_at_intake() -> None:
    accepted = read_event(body(payloads.forged_date_event()), {}, IntakeLimits())
    assert accepted.event["eventTime"] < "9999"
    assert accepted.warnings[0].startswith("$.eventTime '9999-12-31T23:59:59.999Z' is more than 300 seconds ahead")


@pytest.mark.parametrize("case", OVER_LIMITS, ids=[case.setting for case in OVER_LIMITS])
def test_just_over_each_limit_is_refused_naming_its_setting(
    case: OverLimit, honest_intake_lines_per_kib: float
) -> None:
    data = case.make()
    status, error = answer(data)
    assert (status, f"(setting {case.setting})" in error) == (case.status, True), error
    assert within_bound(lambda: answer(data), len(data), honest_intake_lines_per_kib)
