"""Outage: the catalog is down for a minute in the middle of a replay. Events keep being accepted, wait in the queue
(Azurite) while every catalog call is refused, and land once the catalog is back; none goes to poison.

The outage lasts at least OUTAGE_SECONDS and until every COMPLETE sent during it has been tried and refused at least
twice (the worker's failure count says so), so the proof does not depend on how fast this machine is.
"""

from __future__ import annotations

import time

import pytest

from tests.support.waiting import wait_until
from tools.functions_host.launcher import start_serve
from tools.samples.delivery import catalog_dump, catalog_mismatches, generated_events, post_events, set_catalog_faults

pytestmark = [pytest.mark.e2e, pytest.mark.azurite, pytest.mark.slow]

OUTAGE_SECONDS = 60.0
BEFORE, DURING = 40, 100  # runs sent before the outage and while the catalog is down


def test_events_wait_in_the_queue_while_the_catalog_is_down_and_land_after(tmp_path):
    serve = start_serve(tmp_path / "outage", key="k", storage="azurite")
    try:
        assert post_events(serve.url, serve.key, generated_events(BEFORE)) == [200] * (2 * BEFORE)
        serve.wait_until_processed(timeout=120)

        set_catalog_faults(serve.catalog_url, "down")
        down_at = time.monotonic()
        during = generated_events(DURING, start=BEFORE)
        samples = [serve.status()]
        assert post_events(serve.url, serve.key, during) == [200] * (2 * DURING)  # intake does not need the catalog

        def outage_over() -> bool:
            samples.append(serve.status())
            tried_twice = samples[-1]["worker"]["failed"] - samples[0]["worker"]["failed"] >= 2 * DURING
            return tried_twice and time.monotonic() - down_at >= OUTAGE_SECONDS

        wait_until(outage_over, timeout=OUTAGE_SECONDS + 120, interval=1.0, what="every COMPLETE refused twice")
        set_catalog_faults(serve.catalog_url, "none")
        back_at = time.monotonic()
        status = serve.wait_until_processed(timeout=180)
        landed_after = time.monotonic() - back_at
        dump = catalog_dump(serve.atlas_url)
    finally:
        assert serve.stop() == 0
    waiting = [s["queues"]["lineage-events"]["approximateCount"] for s in samples]
    failed = [s["worker"]["failed"] for s in samples]
    print(
        f"\noutage {OUTAGE_SECONDS:.0f} s: queue {waiting[0]} -> max {max(waiting)} messages waiting, "
        f"{failed[-1]} failed attempts, all landed {landed_after:.1f} s after the catalog came back"
    )
    # Every COMPLETE sent during the outage needs the catalog: they all wait in the queue until it is back.
    assert waiting[0] == 0
    assert waiting[-1] >= DURING
    assert failed[-1] - failed[0] >= 2 * DURING
    assert all(s["queues"]["lineage-events"]["poisonCount"] == 0 for s in [*samples, status])
    assert catalog_mismatches(dump, range(BEFORE + DURING)) == []
