"""The 30 reference vectors, reproduced exactly by the default config (the documented 'test' rule placed first)."""

from __future__ import annotations

import json

import pytest

from olparser.naming import MappingEngine
from tests.support.repository import SHARED
from tests.support.rules import MAPPINGS_PATH

VECTOR_FILE = SHARED / "vectors" / "qn_cases.json"
# none without ../shared: the tests are marked `shared` (tests/shared_marker.py) and still collect
VECTORS = json.loads(VECTOR_FILE.read_text()) if VECTOR_FILE.is_file() else {"cases": [], "workspaceUrl": ""}


@pytest.fixture(scope="module")
def engine_with_doc_rule(vectors_dir) -> MappingEngine:
    doc_rule = json.loads((vectors_dir / "doc_rule_test.json").read_text())["rule"]
    return MappingEngine.from_rules([doc_rule, *json.loads(MAPPINGS_PATH.read_text())])


def test_there_are_thirty_vectors():
    assert len(VECTORS["cases"]) == 30


@pytest.mark.parametrize(
    "case", VECTORS["cases"], ids=[f"{i}-{c['label'] or c['name']}" for i, c in enumerate(VECTORS["cases"])]
)
def test_vector(engine_with_doc_rule, reference_mounts, case):
    result = engine_with_doc_rule.map(
        case["namespace"], case["name"], mounts=reference_mounts, workspace_url=VECTORS["workspaceUrl"]
    )
    assert (result.qualified_name, result.purview_type) == (case["qualifiedName"], case["purviewType"])
