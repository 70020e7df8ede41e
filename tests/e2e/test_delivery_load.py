"""Load, scaled down from bench/delivery_load.py (16 x 1,000): 4 concurrent senders x 100 events through
`ol2purview serve` in queue mode on Azurite. Zero errors, and every run lands in the catalog exactly as sent."""

from __future__ import annotations

import pytest

from bench.delivery_load import run_load
from tools.functions_host.launcher import start_serve
from tools.samples.delivery import catalog_dump, catalog_mismatches

pytestmark = [pytest.mark.e2e, pytest.mark.azurite]

SENDERS, PER_SENDER = 4, 100


def test_concurrent_senders_get_no_error_and_every_run_lands(tmp_path):
    serve = start_serve(tmp_path / "load", key="k", storage="azurite")
    try:
        result = run_load(serve.url, serve.key, SENDERS, PER_SENDER, lambda: serve.wait_until_processed(timeout=180))
        status = serve.status()
        dump = catalog_dump(serve.atlas_url)
    finally:
        assert serve.stop() == 0
    print("\n" + result.describe())
    runs = SENDERS * PER_SENDER // 2
    assert (result.events, result.errors) == (400, 0)
    assert status["queues"]["lineage-events"]["poisonCount"] == 0
    assert catalog_mismatches(dump, range(runs)) == []
