"""Crash of the intake under group commit: 16 senders post at once to `ol2purview serve` (embedded storage, queue
trigger off), and serve is killed with SIGKILL right after a number of 200s came back, while requests are still in
flight. Every event that was answered 200 is in the queue file (big ones through their claim check), and a restarted
serve processes them all.
"""

from __future__ import annotations

import signal
import sqlite3
import threading

import pytest
import requests

from olparser.adapters.delivery.queues import embedded_queue_path
from olparser.adapters.delivery.sender import courier_from_settings
from olparser.settings import Settings
from tests.support.waiting import wait_until
from tools.functions_host.launcher import start_serve
from tools.samples.delivery import ENDPOINT, databricks_run

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

RUNS = 160
SENDERS = 16
KILL_AFTER = 120  # acknowledgements
BIG_FACET = {"bulk": {"_producer": "test", "_schemaURL": "test", "text": "x" * 70_000}}  # a claim-checked event


def events() -> list[dict]:
    """START and COMPLETE of RUNS runs; every tenth run carries a facet that makes its events travel by claim check."""
    return [
        event
        for index in range(RUNS)
        for event in databricks_run(index, extra_run_facets=BIG_FACET if index % 10 == 0 else None)
    ]


def test_every_event_answered_200_is_in_the_queue_after_a_sigkill(tmp_path):
    data = tmp_path / "serve"
    serve = start_serve(data, key="k", storage="embedded", worker=False)
    all_events = events()
    acknowledged: list[tuple[str, str]] = []
    lock = threading.Lock()

    def send(indexes: range) -> None:
        with requests.Session() as session:
            for i in indexes:
                try:
                    response = session.post(
                        serve.url + ENDPOINT, headers={"x-functions-key": serve.key}, json=all_events[i], timeout=30
                    )
                except requests.RequestException:
                    return  # serve is gone
                if response.status_code == 200:
                    with lock:
                        acknowledged.append((all_events[i]["run"]["runId"], all_events[i]["eventType"]))

    senders = [threading.Thread(target=send, args=(range(s, len(all_events), SENDERS),)) for s in range(SENDERS)]
    for sender in senders:
        sender.start()
    try:
        wait_until(
            lambda: len(acknowledged) >= KILL_AFTER, timeout=120, interval=0.001, what=f"{KILL_AFTER} acknowledgements"
        )
        serve.process.send_signal(signal.SIGKILL)
        assert serve.process.wait(10) == -signal.SIGKILL
    finally:
        for sender in senders:
            sender.join(60)
        serve.stop()
    with lock:
        answered = set(acknowledged)
    assert KILL_AFTER <= len(answered) < len(all_events)  # killed mid-stream

    db = sqlite3.connect(embedded_queue_path(data))
    texts = [text for (text,) in db.execute("SELECT text FROM queue_messages WHERE queue = 'lineage-events'")]
    db.close()
    courier = courier_from_settings(Settings.from_env({"OL2PURVIEW_DATA_DIR": str(data)}))
    queued = [courier.open_event(text) for text in texts]
    stored = {(event["run"]["runId"], event["eventType"]) for event in queued}
    assert answered - stored == set()
    assert any(len(event["run"]["facets"].get("bulk", {}).get("text", "")) == 70_000 for event in queued)

    restarted = start_serve(data, key="k", storage="embedded")
    try:
        status = restarted.wait_until_processed(timeout=180)
    finally:
        assert restarted.stop() == 0
    assert status["worker"]["succeeded"] == len(texts)
    assert status["queues"]["lineage-events"]["poisonCount"] == 0
