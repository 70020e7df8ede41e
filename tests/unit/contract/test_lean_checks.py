"""The generated lean checks (olparser/contract/lean_checks.py) are what the contract says they are: the file is what
the generator writes from the contract today, and on instances of every definition (valid ones, and ones broken in
one place) each check answers exactly as the detailed validator that explains refusals."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from olparser.contract.schema import contract, contract_validators, date_time_by_pattern, is_date_time
from olparser.contract.times import event_instant, instant_by_pattern
from tools import generate_contract_checks

DEFS = contract()["$defs"]
# Small bounds, so that generated instances reach them: names of 6 characters, arrays of 2.
SMALL = contract_validators(6, datasets=2, columns=2, mounts=2, input_fields=2)
DEFINITIONS = sorted(
    {compiled.name for compiled in SMALL.events.values()}
    | {compiled.name for group in SMALL.facets.values() for compiled in group.values()}
)
COMPILED = {
    compiled.name: compiled
    for compiled in [*SMALL.events.values(), *(c for group in SMALL.facets.values() for c in group.values())]
}

texts = st.text(alphabet=st.sampled_from("ab:/\x00\x1f\x7f\n é"), max_size=8)
anything = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2, 2), texts),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(texts, inner, max_size=3)),
    max_leaves=6,
)
times = st.sampled_from(
    [
        "2024-10-16T16:47:11.761Z",
        "2024-10-16T16:47:60.000Z",
        "2024-02-30T00:00:00.000Z",
        "2024-10-16 16:47:11+05:30",
        "2024-10-16T16:47:11.7x1Z",
        "2024-10-16",
        "2024-10-16T16:47:11",
    ]
)
uuids = st.one_of(st.builds(lambda: str(uuid.uuid4())), st.just("not-a-uuid"), st.just("{" + "0" * 32 + "}"))


def instances(schema: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values of `schema`, now and then with any JSON value in one place instead (which may break it)."""
    ref = schema.get("$ref")
    if ref is not None:
        if depth > 6 and ref.endswith("/SchemaField"):  # nested schema fields: stop somewhere
            return st.just({"name": "x"})
        return instances(DEFS[ref.rsplit("/", 1)[1]], depth + 1)
    return st.one_of(_values(schema, depth), anything) if depth else _values(schema, depth)


def _values(schema: dict[str, Any], depth: int) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from([*schema["enum"], "OTHER_VALUE"])
    kinds = schema.get("type", ["string", "object", "array", "integer", "number", "boolean", "null"])
    kinds = [kinds] if isinstance(kinds, str) else kinds
    options = []
    for kind in kinds:
        if kind == "string":
            options.append({"date-time": times, "uuid": uuids}.get(schema.get("format"), texts))
        elif kind == "integer":
            options.append(st.one_of(st.integers(-5, 5), st.sampled_from([1.0, 2.5, True])))
        elif kind == "number":
            options.append(st.one_of(st.integers(-5, 5), st.floats(-5, 5), st.just(False)))
        elif kind == "boolean":
            options.append(st.booleans())
        elif kind == "null":
            options.append(st.none())
        elif kind == "array":
            item = schema.get("items")
            options.append(st.lists(instances(item, depth + 1) if item else anything, max_size=3))
        elif kind == "object":
            options.append(_objects(schema, depth))
    return st.one_of(options)


def _objects(schema: dict[str, Any], depth: int) -> st.SearchStrategy[dict[str, Any]]:
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))
    extra = schema.get("additionalProperties", True)
    members = st.fixed_dictionaries(
        {key: instances(sub, depth + 1) for key, sub in properties.items() if key in required},
        optional={key: instances(sub, depth + 1) for key, sub in properties.items() if key not in required},
    )
    if isinstance(extra, dict):
        others = st.dictionaries(texts, instances(extra, depth + 1), max_size=3)
        members = st.builds(lambda named, more: {**more, **named}, members, others)
    drop = st.sampled_from([None, *sorted(required)])  # now and then a required member missing
    return st.builds(lambda value, missing: {k: v for k, v in value.items() if k != missing}, members, drop)


def detailed_valid(name: str, instance: Any) -> bool:
    try:
        COMPILED[name].fast(instance)
    except Exception:  # noqa: BLE001 - any refusal of fastjsonschema
        return False
    return True


def test_the_written_file_is_what_the_generator_writes_from_the_contract():
    assert generate_contract_checks.main(["--check"]) == 0


@pytest.mark.parametrize("name", DEFINITIONS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_each_check_answers_as_the_detailed_validator(name, data):
    instance = data.draw(instances(DEFS[name]))
    assert COMPILED[name].lean(instance) is detailed_valid(name, instance)


@settings(max_examples=300, deadline=None)
@given(instances(DEFS["ColumnLineageDatasetFacet"]))
def test_without_the_control_patterns_only_control_characters_pass_that_would_not(instance):
    lean, plain = COMPILED["ColumnLineageDatasetFacet"].lean, COMPILED["ColumnLineageDatasetFacet"].lean_plain
    if lean(instance) != plain(instance):
        assert plain(instance) and not lean(instance)
        assert any(ch in repr(instance) for ch in ("\\x00", "\\x1f", "\\x7f", "\\n"))


@pytest.mark.parametrize(
    "name, instance, valid",
    [
        ("SchemaDatasetFacet", {"fields": [{"name": "a", "fields": [{"name": "b", "fields": [{"name": 1}]}]}]}, False),
        ("SchemaDatasetFacet", {"fields": [{"name": "a", "fields": [{"name": "b", "ordinal_position": 2.0}]}]}, True),
        ("SchemaDatasetFacet", {"fields": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}, False),  # columns=2
        (
            "ColumnLineageDatasetFacet",
            {"fields": {"c": {"inputFields": [{"namespace": "n", "name": "1234567", "field": "c"}]}}},
            False,
        ),  # name 7 > 6
        (
            "ColumnLineageDatasetFacet",
            {
                "fields": {
                    "c": {
                        "inputFields": [
                            {
                                "namespace": "n",
                                "name": "t",
                                "field": "c",
                                "transformations": [{"type": "DIRECT", "masking": "no"}],
                            }
                        ]
                    }
                }
            },
            False,
        ),
        ("StatisticsFacet", {"rowCount": True}, False),
    ],
)
def test_known_cases(name, instance, valid):
    assert COMPILED[name].lean(instance) is valid
    assert detailed_valid(name, instance) is valid


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        times,
        st.from_regex(r"\A\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\Z"),
        st.text(alphabet="0123456789-T:.Z\u0663", min_size=24, max_size=24),
    )
)
def test_the_spark_form_is_read_as_the_pattern_reads_it(text):
    assert is_date_time(text) is date_time_by_pattern(text)
    assert event_instant(text) == instant_by_pattern(text)
