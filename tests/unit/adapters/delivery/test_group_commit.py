"""Group commit: concurrent submits share commits, each answered only after the commit holding its item returned."""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from olparser.adapters.delivery.group_commit import GroupCommit
from olparser.adapters.delivery.queues import SqliteQueueService
from tests.support.waiting import wait_until


class GatedCommit:
    """A commit that records its batches and, while `gate` is closed, blocks (as an fsync does) so that writers pile
    up behind it."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.fail_with: Exception | None = None

    def __call__(self, items: list[int]) -> list[int]:
        self.entered.set()
        self.gate.wait(10)
        if self.fail_with is not None:
            raise self.fail_with
        self.batches.append(list(items))
        return [item * 10 for item in items]


def test_a_lone_submit_commits_at_once_and_gets_its_result():
    commit = GatedCommit()
    commit.gate.set()
    group = GroupCommit(commit, window=5.0)  # a lone writer never waits the window
    assert group.submit(7) == 70
    assert commit.batches == [[7]]


def test_submits_that_arrive_during_a_commit_share_the_next_one():
    commit = GatedCommit()
    group = GroupCommit(commit, window=0.0)
    with ThreadPoolExecutor(9) as pool:
        first = pool.submit(group.submit, 0)
        assert commit.entered.wait(10)
        others = [pool.submit(group.submit, item) for item in range(1, 9)]
        wait_until(lambda: len(group._waiting) == 8, timeout=10)
        assert not any(f.done() for f in [first, *others])  # nobody is answered before its commit returned
        commit.gate.set()
        assert [f.result(10) for f in [first, *others]] == [0, 10, 20, 30, 40, 50, 60, 70, 80]
    assert commit.batches[0] == [0]
    assert sorted(commit.batches[1]) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert group.commits == 2


def test_a_commit_holds_at_most_max_items():
    commit = GatedCommit()
    group = GroupCommit(commit, window=0.0, max_items=3)
    with ThreadPoolExecutor(8) as pool:
        first = pool.submit(group.submit, 0)
        assert commit.entered.wait(10)
        others = [pool.submit(group.submit, item) for item in range(1, 8)]
        wait_until(lambda: len(group._waiting) == 7, timeout=10)
        commit.gate.set()
        assert [f.result(10) for f in [first, *others]] == [0, 10, 20, 30, 40, 50, 60, 70]
    assert [len(batch) for batch in commit.batches] == [1, 3, 3, 1]
    assert sorted(item for batch in commit.batches for item in batch) == list(range(8))


def test_a_failed_commit_raises_in_every_writer_it_held_and_the_next_one_works():
    commit = GatedCommit()
    group = GroupCommit(commit, window=0.0)
    commit.fail_with = OSError("disk full")
    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(group.submit, 1)
        assert commit.entered.wait(10)
        others = [pool.submit(group.submit, item) for item in (2, 3)]
        wait_until(lambda: len(group._waiting) == 2, timeout=10)
        commit.gate.set()
        for future in [first, *others]:
            with pytest.raises(OSError, match="disk full"):
                future.result(10)
    commit.fail_with = None
    assert group.submit(4) == 40
    assert commit.batches == [[4]]


def test_concurrent_sqlite_sends_share_transactions_and_all_are_on_disk(tmp_path):
    service = SqliteQueueService(tmp_path / "queues.sqlite3")
    queue = service.queue("lineage-events")
    texts = [f"message {i}" for i in range(200)]
    with ThreadPoolExecutor(16) as pool:
        ids = list(pool.map(queue.send, texts))
    assert len(set(ids)) == 200
    assert service.sends.commits < 200  # some sends shared a transaction
    service.close()
    db = sqlite3.connect(tmp_path / "queues.sqlite3")  # another connection: what the file holds
    stored = dict(db.execute("SELECT id, text FROM queue_messages WHERE queue = 'lineage-events'").fetchall())
    db.close()
    assert stored == dict(zip(ids, texts, strict=True))


def test_concurrent_claim_checks_share_the_folder_flush_and_all_are_readable(tmp_path):
    from olparser.adapters.delivery.claim_check import FolderClaimCheckStore

    store = FolderClaimCheckStore(tmp_path, "events")
    payloads = {f"event-{i}.json.gz": f'{{"i": {i}}}'.encode() for i in range(64)}
    with ThreadPoolExecutor(16) as pool:
        references = list(pool.map(lambda item: store.put(*item), payloads.items()))
    assert references == [f"events/{name}" for name in payloads]
    assert {ref: store.get(ref) for ref in references} == {f"events/{n}": data for n, data in payloads.items()}
    assert store._renames.commits < 64
    assert sorted(p.name for p in (tmp_path / "events").iterdir()) == sorted(payloads)  # no temporary file left
