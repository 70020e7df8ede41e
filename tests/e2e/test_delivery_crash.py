"""Crash: HTTP intake (`ol2purview serve --no-worker`) and the queue worker (`ol2purview worker`) run as separate
processes on Azurite. The worker is killed with SIGKILL in the middle of a replay and restarted: every run lands once,
nothing is lost and nothing is duplicated (the messages it held come back after their lease, as on Azure).
"""

from __future__ import annotations

import signal
import threading
import time

import pytest

from tests.support.waiting import wait_until
from tools.functions_host.launcher import start_serve, start_worker
from tools.samples.delivery import catalog_calls, catalog_dump, catalog_mismatches, generated_events, post_events

pytestmark = [pytest.mark.e2e, pytest.mark.azurite, pytest.mark.slow]

RUNS = 150


def test_a_worker_killed_mid_replay_and_restarted_loses_and_duplicates_nothing(tmp_path):
    serve = start_serve(tmp_path / "crash", key="k", storage="azurite", worker=False)
    worker = start_worker(serve, "azurite")
    statuses: list[int] = []
    try:
        sender = threading.Thread(
            target=lambda: statuses.extend(post_events(serve.url, serve.key, generated_events(RUNS), senders=2))
        )
        sender.start()
        wait_until(
            lambda: catalog_calls(serve.catalog_url) >= 60,
            timeout=120,
            interval=0.05,
            what="the worker writing lineage",
        )
        worker.process.send_signal(signal.SIGKILL)
        assert worker.process.wait(10) == -signal.SIGKILL
        killed_at = time.monotonic()
        sender.join(120)
        waiting = serve.status()["queues"]["lineage-events"]["approximateCount"]
        calls_at_restart = catalog_calls(serve.catalog_url)
        worker = start_worker(serve, "azurite")
        status = serve.wait_until_processed(timeout=180)
        recovered = time.monotonic() - killed_at
        dump = catalog_dump(serve.atlas_url)
    finally:
        worker.stop()
        assert serve.stop() == 0
    print(
        f"\ncrash: SIGKILL after {calls_at_restart} catalog calls, {waiting} messages waiting; "
        f"all {RUNS} runs landed {recovered:.1f} s after the kill"
    )
    assert statuses == [200] * (2 * RUNS)  # the intake kept accepting while no worker ran
    assert waiting > 0
    assert status["queues"]["lineage-events"]["poisonCount"] == 0
    assert catalog_mismatches(dump, range(RUNS)) == []
