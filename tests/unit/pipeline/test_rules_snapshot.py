"""A plan is built with one rule set (issue 44): the runner takes one snapshot of its rules per plan and builds the
whole plan with it, so a rule file reloaded in the middle of a build never gives one plan two rule sets."""

from __future__ import annotations

from olparser.adapters.rules_file import ReloadingEngine
from olparser.naming import MappingEngine
from tests.support.pipelines import _cll, make_pipeline
from tests.support.rules import MAPPINGS_PATH
from tests.unit.pipeline.fake_catalog import FakeCatalog


class OnlySnapshots:
    """A rule source that answers nothing but `snapshot()`: any other use by the build would raise."""

    def __init__(self, engine: MappingEngine) -> None:
        self._engine = engine
        self.snapshots = 0

    def snapshot(self) -> MappingEngine:
        self.snapshots += 1
        return self._engine


def test_each_plan_takes_one_snapshot_of_the_rules_and_builds_with_it_alone(shared_dir, store, engine):
    rules = OnlySnapshots(engine)
    catalog = FakeCatalog()
    pipeline = make_pipeline(store, rules, catalog)
    start, running, _running2, complete = _cll(shared_dir, 5, 6, 7, 8)
    assert [pipeline.process(e).status for e in (start, running, complete)] == ["waiting", "waiting", "written"]
    assert (rules.snapshots, catalog.calls) == (1, 1)  # one plan built: one snapshot, one upload


def test_a_rule_files_snapshot_stays_the_rules_read_when_it_was_taken(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text(MAPPINGS_PATH.read_text(encoding="utf-8"), encoding="utf-8")
    now = [0.0]
    source = ReloadingEngine(path, check_seconds=1.0, clock=lambda: now[0])
    taken = source.snapshot()
    path.write_text("[]", encoding="utf-8")  # the file changes: the next look, a second later, reloads it
    now[0] = 5.0
    assert len(source.snapshot().rules) == 0
    assert taken.rules and taken is not source.snapshot()
