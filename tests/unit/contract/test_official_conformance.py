"""Every event the official OpenLineage schemas accept, the project's contract accepts too, keeping every facet it reads.

The official schemas are loaded from ../shared/openlineage/spec: every file, history included, registered under its
$id with `referencing`; an event is checked against OpenLineage.json#/$defs/<kind>, and each facet against the
schema its _schemaURL names when that schema is known (unknown URLs are tolerated, as the spec asks).
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from olparser.contract import IngestError, IntakeLimits, read_event
from olparser.contract.reader import event_kind
from olparser.contract.strip import facet_maps
from tests.support.repository import SHARED

SPEC = SHARED / "openlineage" / "spec"
CORE_ID = "https://openlineage.io/spec/2-0-2/OpenLineage.json"


def _official_registry() -> Registry:
    resources = []
    for path in sorted(SPEC.rglob("*.json")):
        contents = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(contents, dict) and "$id" in contents:
            resources.append((contents["$id"], Resource.from_contents(contents, default_specification=DRAFT202012)))
    return Registry().with_resources(resources)


REGISTRY = _official_registry()
FORMATS = FormatChecker()  # uuid, plus whatever optional format packages are installed


def official(ref: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": ref}, registry=REGISTRY, format_checker=FORMATS)


OFFICIAL_EVENTS = {kind: official(f"{CORE_ID}#/$defs/{kind}") for kind in ("RunEvent", "DatasetEvent", "JobEvent")}


def official_problems(event: dict[str, Any]) -> list[str]:
    """Why the official schemas refuse `event` (empty when they accept it, facets included)."""
    try:
        kind = event_kind(event)
    except Exception:
        return ["not an event of any kind"]
    problems = [e.message[:100] for e in OFFICIAL_EVENTS[kind].iter_errors(event)]
    for path, facets in facet_maps(event):
        for name, facet in facets.items():
            url = facet.get("_schemaURL") if isinstance(facet, dict) else None
            if not url:
                continue
            try:
                validator = official(url)
                errors = list(validator.iter_errors(facet))
            except Unresolvable:
                continue  # an unknown or unresolvable _schemaURL must be tolerated
            problems += [f"{path}.{name}: {e.message[:100]}" for e in errors]
    return problems


def sample_events() -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted((SHARED / "openlineage" / "events").glob("*.json")):
        contents = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(contents, list):  # the accelerator's filter cases: [{name, event, ...}]
            for case in contents:
                yield f"{path.name}:{case['name']}", case["event"]
        else:
            yield path.name, contents
    for path in sorted((SHARED / "openlineage" / "sequences").glob("*/*.json")):
        if not path.name.startswith("_"):
            yield f"{path.parent.name}/{path.name}", json.loads(path.read_text(encoding="utf-8"))


SAMPLES = list(sample_events())
OFFICIALLY_VALID = [(name, event) for name, event in SAMPLES if not official_problems(event)]
REAL_PREFIXES = ("compat-tests", "website-docs")


def test_the_official_schemas_accept_exactly_the_real_samples() -> None:
    """Guards the check below: it must run on every real event (the templates lack eventTime / producer)."""
    real = sorted(name for name, _ in SAMPLES if name.startswith(REAL_PREFIXES))
    assert len(real) == 44
    assert sorted(name for name, _ in OFFICIALLY_VALID) == real


@pytest.mark.parametrize("name, event", OFFICIALLY_VALID, ids=[name for name, _ in OFFICIALLY_VALID])
def test_what_the_official_schema_accepts_the_contract_accepts(name: str, event: dict[str, Any]) -> None:
    accepted = read_event(json.dumps(event).encode(), {"Content-Type": "application/json"}, IntakeLimits())
    assert accepted.warnings == ()
    kept = {(path, facet) for path, facets in facet_maps(accepted.event) for facet in facets}
    sent = {(path, facet) for path, facets in facet_maps(event) for facet in facets}
    stripped = set(IntakeLimits().stripped_facets)
    assert kept == {(path, facet) for path, facet in sent if facet not in stripped}
    assert accepted.run_id == event["run"]["runId"]
    assert accepted.event_type == event.get("eventType")


def test_the_hand_edited_column_lineage_sample_is_accepted_without_producer_fields() -> None:
    """The accelerator's sample lacks _producer in its output facets: the official schema refuses it, we must not."""
    body = (SHARED / "openlineage" / "events" / "accelerator__UnitTestColData_CompleteOlColMessage.json").read_bytes()
    event = json.loads(body)
    assert official_problems(event) != []
    accepted = read_event(body, {}, IntakeLimits())
    assert accepted.warnings == ()
    assert set(accepted.event["outputs"][0]["facets"]) == {"schema", "columnLineage"}
    assert accepted.event["outputs"][0]["facets"]["columnLineage"] == event["outputs"][0]["facets"]["columnLineage"]
    assert set(accepted.event["run"]["facets"]) == {
        "environment-properties",
        "spark_version",
    }  # spark.logicalPlan stripped


def test_the_spark_templates_without_event_time_are_refused_like_the_official_schema_does() -> None:
    body = (SHARED / "openlineage" / "events" / "container__pysparkHiveCompleteEvent.json").read_bytes()
    with pytest.raises(IngestError) as caught:
        read_event(body, {}, IntakeLimits())
    assert caught.value.to_json() == {"error": "$.eventTime is required but missing", "path": "$.eventTime"}
