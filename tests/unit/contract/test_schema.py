"""The contract's two compilations (fastjsonschema for speed, jsonschema for explanations) must give the same verdicts."""

from __future__ import annotations

import json
from typing import Any, Iterator

import fastjsonschema
import pytest

from olparser.contract.facets import facet_group
from olparser.contract.schema import CompiledDef, contract, contract_validators
from olparser.contract.strip import facet_maps
from tests.support.repository import SHARED
from tests.unit.contract.helpers import minimal_event

NAMES = ["ok", "", "a\nb", "tail\n", "x" * 4097, "\x7f", "{prefix}", 5, None]
TIMES = [
    "2024-01-01T00:00:00Z",
    "2024-01-01T00:00:00",
    "2024-01-01",
    "2024-02-30T00:00:00Z",
    "2024-01-01T00:00:00.1234567890Z",
    0,
]
RUN_IDS = [
    "019127df-0850-72bc-b214-b255290588a6",
    "019127DF-0850-72BC-B214-B255290588A6",
    "urn:uuid:019127df-0850-72bc-b214-b255290588a6",
    "019127df0850-72bc-b214-b255290588a6-",
    1,
]


def fast_ok(compiled: CompiledDef, instance: Any) -> bool:
    try:
        compiled.fast(instance)
        return True
    except fastjsonschema.JsonSchemaException:
        return False


def variants() -> Iterator[dict[str, Any]]:
    for name in NAMES:
        yield minimal_event(job={"namespace": "default", "name": name})
        yield minimal_event(outputs=[{"namespace": name, "name": "/x"}])
    for time in TIMES:
        yield minimal_event(eventTime=time)
    for run_id in RUN_IDS:
        yield minimal_event(run={"runId": run_id})
    for event_type in ["START", "start", None, 3]:
        yield minimal_event(eventType=event_type)
    yield minimal_event(inputs={})
    yield minimal_event(outputs=[[]])
    for name in NAMES:
        yield {"eventTime": TIMES[0], "producer": "p", "dataset": {"namespace": "dbfs", "name": name}}


def samples() -> Iterator[dict[str, Any]]:
    for path in sorted((SHARED / "openlineage" / "events").glob("*.json")):
        contents = json.loads(path.read_text(encoding="utf-8"))
        events = [case["event"] for case in contents] if isinstance(contents, list) else [contents]
        yield from (event for event in events if isinstance(event, dict))


@pytest.mark.parametrize("kind", ["RunEvent", "DatasetEvent", "JobEvent"])
def test_fast_and_full_validators_agree_on_events(kind: str) -> None:
    compiled = contract_validators().events[kind]
    cases = [*variants(), *samples()]
    disagreements = [case for case in cases if fast_ok(compiled, case) != compiled.full.is_valid(case)]
    assert disagreements == []
    assert {fast_ok(compiled, case) for case in cases} == {True, False}  # both verdicts were exercised


def test_fast_and_full_validators_agree_on_every_sample_facet() -> None:
    validators = contract_validators()
    checked = 0
    for event in samples():
        for path, facets in facet_maps(event):
            for name, facet in facets.items():
                compiled = validators.facets[facet_group(path)].get(name)
                if compiled is not None:
                    checked += 1
                    assert fast_ok(compiled, facet) == compiled.full.is_valid(facet), (path, name)
    assert checked > 100


def test_every_read_facet_has_a_definition_and_every_reference_resolves() -> None:
    validators = contract_validators()
    assert set(validators.facets["dataset"]) == {
        "schema",
        "symlinks",
        "columnLineage",
        "dataSource",
        "storage",
        "catalog",
        "lifecycleStateChange",
        "version",
        "documentation",
        "dataQualityMetrics",
        "datasetType",
        "lineage",
    }
    assert set(validators.facets["run"]) == {
        "parent",
        "environment-properties",
        "processing_engine",
        "spark_version",
        "spark_applicationDetails",
        "spark_properties",
        "nominalTime",
        "errorMessage",
    }
    assert set(validators.facets["job"]) == {
        "jobType",
        "sourceCodeLocation",
        "sql",
        "documentation",
        "ownership",
        "lineage",
        "tags",
    }
    assert set(validators.facets["inputFacets"]) == {"inputStatistics", "dataQualityMetrics"}
    assert set(validators.facets["outputFacets"]) == {"outputStatistics"}
    refs = {ref for ref in _refs(contract())}
    assert {ref.rsplit("/", 1)[1] for ref in refs} <= set(contract()["$defs"])


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if "$ref" in node:
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)
