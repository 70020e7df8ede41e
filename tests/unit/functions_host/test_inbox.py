"""The SQLite inbox behind the endpoint: durable hand-off, then queue-like consumption."""
import json
import sqlite3
import threading

import pytest

from olparser.contract import AcceptedEvent
from olparser.delivery.inbox import SqliteInbox


def event(n: int) -> AcceptedEvent:
    run_id = f"00000000-0000-4000-8000-{n:012d}"
    return AcceptedEvent(event={"run": {"runId": run_id}, "eventType": "COMPLETE", "n": n}, kind="RunEvent",
                         run_id=run_id, event_type="COMPLETE")


@pytest.fixture
def inbox(tmp_path):
    box = SqliteInbox(tmp_path / "inbox.sqlite3", max_attempts=3)
    yield box
    box.close()


def test_hand_off_stores_the_event_durably_in_wal_mode_with_full_sync(inbox, tmp_path):
    assert inbox.hand_off(event(1)) == "stored"
    reopened = SqliteInbox(tmp_path / "inbox.sqlite3")
    assert reopened.counts() == {"pending": 1, "claimed": 0, "dead": 0}
    item = reopened.claim(10)[0]
    assert (item.kind, item.run_id, item.event_type, json.loads(item.body)["n"]) == (
        "RunEvent", "00000000-0000-4000-8000-000000000001", "COMPLETE", 1)
    raw = sqlite3.connect(tmp_path / "inbox.sqlite3")
    assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert inbox._db.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL


def test_claim_takes_the_oldest_first_and_counts_attempts(inbox):
    for n in range(5):
        inbox.hand_off(event(n))
    first = inbox.claim(2)
    assert [json.loads(i.body)["n"] for i in first] == [0, 1]
    assert [i.attempts for i in first] == [1, 1]
    assert [json.loads(i.body)["n"] for i in inbox.claim(10)] == [2, 3, 4]
    assert inbox.claim(10) == []  # all leased
    assert inbox.counts() == {"pending": 0, "claimed": 5, "dead": 0}


def test_complete_removes_and_fail_retries_then_parks_as_dead(inbox):
    inbox.hand_off(event(1))
    inbox.hand_off(event(2))
    done, failing = inbox.claim(2)
    inbox.complete(done.id)
    assert inbox.fail(failing.id, "catalog unreachable") == "pending"
    assert inbox.claim(1)[0].attempts == 2
    assert inbox.fail(failing.id, "catalog unreachable") == "pending"
    assert inbox.claim(1)[0].attempts == 3
    assert inbox.fail(failing.id, "catalog unreachable") == "dead"
    assert inbox.claim(1) == []
    assert inbox.counts() == {"pending": 0, "claimed": 0, "dead": 1}
    with pytest.raises(KeyError):
        inbox.fail(12345, "no such item")


def test_an_expired_lease_makes_the_item_claimable_again(tmp_path):
    box = SqliteInbox(tmp_path / "inbox.sqlite3", lease_seconds=-1)  # every lease already expired
    box.hand_off(event(1))
    assert box.claim(1)[0].attempts == 1
    assert box.claim(1)[0].attempts == 2


def test_concurrent_hand_offs_are_all_kept(inbox):
    threads = [threading.Thread(target=lambda t=t: [inbox.hand_off(event(t * 100 + i)) for i in range(50)])
               for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    items = inbox.claim(1000)
    assert len(items) == 400
    assert len({json.loads(i.body)["n"] for i in items}) == 400
