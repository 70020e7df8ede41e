"""`spark backfill`'s lifecycle steps run on a catalog fake, for the tests of dropped and renamed tables that mix the
batch and the live paths (tests/unit/pipeline/test_lifecycle.py, test_lifecycle_order.py)."""

from __future__ import annotations

from typing import Any

from olparser.lineage import LineageOptions
from tests.unit.pipeline.fake_catalog import FakeCatalog


def backfill(store: Any, catalog: Any, engine: Any, *runs: tuple[str, list[dict[str, Any]]]) -> int:
    """`spark backfill`'s steps for these runs (tools/spark/runs.py plan_run, selected_plan, lifecycle_keys,
    standing_changes, batch_marks; tools/spark/catalog.py PlanWriter.write, then PlanWriter.apply_lifecycle as
    tools/spark/spark_job.py calls them), through the catalog fake in place of the throttled client's uploader.
    Returns the entities the drops and renames deleted."""
    import json
    import zlib

    from tools.spark.catalog import PlanWriter
    from tools.spark.runs import PLANNED, batch_marks, lifecycle_keys, plan_run, selected_plan, standing_changes

    results = [
        plan_run(key, [zlib.compress(json.dumps(e).encode()) for e in events], engine, LineageOptions())
        for key, events in runs
    ]
    assert {r.status for r in results} == {PLANNED}
    selected = [selected_plan(result, {}, {}) for result in results]
    writer = PlanWriter(catalog, store, None)
    stats = writer.write(selected)
    changing = [s for s in selected if s.lifecycle]
    wanted = frozenset(key for s in changing for key in s.lifecycle.keys())
    written: dict = {}
    for key, order in (pair for s in selected for pair in lifecycle_keys(s, wanted)):
        written[key] = max(order, written.get(key, order))
    return writer.apply_lifecycle(
        standing_changes(changing, written), stats.links, batch_marks(changing, written, stats.links)
    ).deleted


class BatchCatalog(FakeCatalog):
    """The fake as the backfill's uploader: it holds no process the batch writes (each is written)."""

    def read(self, keys: Any, calls: list[int]) -> dict:
        return {}
