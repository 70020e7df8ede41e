"""`build_lineage` gives, for every case of a broad corpus (tests/support/lineage_corpus.py), the plan recorded in
build_golden.json: its fingerprint and a digest of the whole plan. Recorded before the builder was split into
planners (olparser/lineage/planners.py), so that the split is known to change nothing.

To record again after a deliberate change of what the builder writes: `python -m tests.unit.lineage.test_build_golden`
(and say in the commit why each changed case changed).
"""

from __future__ import annotations

import json
from pathlib import Path

from olparser.lineage import build_lineage
from olparser.naming import MappingEngine
from tests.support.fake_engine import FakeEngine
from tests.support.lineage_corpus import Case, local_cases, plan_digest, shared_cases
from tests.support.rules import MAPPINGS_PATH

GOLDEN = Path(__file__).with_name("build_golden.json")
SHARED_PREFIXES = ("sequence/", "event/")


def _digests(cases: list[Case]) -> dict[str, list[str]]:
    engine = MappingEngine.from_path(MAPPINGS_PATH)  # one engine for all: what it remembers is used as it is live
    found: dict[str, list[str]] = {}
    for case in cases:
        assert case.name not in found, case.name
        plan = build_lineage(
            case.run, FakeEngine() if case.engine == "fake" else engine, case.options, **case.arguments
        )
        found[case.name] = plan_digest(plan)
    return found


def _recorded(shared: bool) -> dict[str, list[str]]:
    recorded = json.loads(GOLDEN.read_text())
    return {k: v for k, v in recorded.items() if k.startswith(SHARED_PREFIXES) == shared}


def _differences(found: dict[str, list[str]], recorded: dict[str, list[str]]) -> list[str]:
    return sorted(
        [f"new: {k}" for k in found.keys() - recorded.keys()]
        + [f"gone: {k}" for k in recorded.keys() - found.keys()]
        + [f"changed: {k}" for k in found.keys() & recorded.keys() if found[k] != recorded[k]]
    )


def test_the_builder_gives_the_recorded_plans_for_the_local_corpus():
    found = _digests(local_cases())
    assert len(found) > 1000
    assert _differences(found, _recorded(shared=False)) == []


def test_the_builder_gives_the_recorded_plans_for_the_real_runs():
    found = _digests(shared_cases())
    assert len(found) > 300
    assert _differences(found, _recorded(shared=True)) == []


def test_the_corpus_covers_each_kind_of_plan():
    """The recorded plans are not all alike: notes, processes, owners only, and empty plans are all there."""
    recorded = json.loads(GOLDEN.read_text())
    assert len({fingerprint for fingerprint, _ in recorded.values()}) > 300


if __name__ == "__main__":
    digests = {**_digests(local_cases()), **_digests(shared_cases())}
    lines = [f"{json.dumps(name)}: {json.dumps(digest)}" for name, digest in sorted(digests.items())]
    GOLDEN.write_text("{\n" + ",\n".join(lines) + "\n}\n")  # one case a line
    print(f"{len(digests)} cases recorded in {GOLDEN}")
