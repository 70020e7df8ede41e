"""The ownership ledger's rules (olparser/runs/ledger.py), as pure functions: what a claim and a commit record, what
their intentions release and restore, and that carrying them out twice (a crash, a redelivery, a second instance)
changes nothing the second time."""

from __future__ import annotations

from olparser.runs import ledger
from olparser.runs.ledger import CommitResult, Intentions, OwnershipRecord, WriterChange

PROCESS = ("databricks_process", "databricks://adb-1.2/notebooks/etl/processes/j/t")
INTERIM = ("spark_process", "databricks://adb-1.2/applications/databricks_shell/processes/j/t")
PLACEHOLDER = ("openlineage_dataset", "dbfs:/mnt/raw/orders")
WORKSPACE = ("databricks_workspace", "databricks://adb-1.2")
TYPES = frozenset({"databricks_process", "spark_process"})


def test_a_claim_adds_to_what_the_run_may_have_uploaded_and_claiming_again_changes_nothing():
    record = OwnershipRecord(version=3, epoch=1, claimed=frozenset({WORKSPACE}))
    claimed = ledger.claim(record, [INTERIM, PLACEHOLDER, INTERIM])
    assert claimed == OwnershipRecord(version=3, epoch=1, claimed=frozenset({WORKSPACE, INTERIM, PLACEHOLDER}))
    assert ledger.claim(claimed, [PLACEHOLDER]) is claimed


def test_a_commit_records_the_plan_and_the_intentions_that_carry_it_out():
    record = OwnershipRecord(version=4, epoch=2, claimed=frozenset({WORKSPACE, INTERIM, PLACEHOLDER, PROCESS}))
    new = ledger.commit(
        record,
        [WORKSPACE, PROCESS],
        version=4,
        fingerprint="sha256:ab",
        process_names=[PROCESS[1]],
        run_time=100.5,
        dangling=[("spark_application", "app")],
        process_types=TYPES,
    )
    assert new == OwnershipRecord(
        version=4,
        epoch=3,
        claimed=frozenset({WORKSPACE, PROCESS}),
        fingerprint="sha256:ab",
        pending=Intentions(
            epoch=2,
            release=(PLACEHOLDER, ("spark_application", "app"), INTERIM),
            wrote=(PROCESS[1],),
            run_time=100.5,
            dropped=(INTERIM[1],),
        ),
    )


def test_a_commit_of_a_plan_built_from_an_older_version_is_stale_and_static_lineage_has_none():
    record = OwnershipRecord(version=5)
    assert ledger.commit(record, [PROCESS], version=4, fingerprint="f") is None
    static = ledger.commit(OwnershipRecord(), [PROCESS], version=None, fingerprint="f")
    assert static == OwnershipRecord(
        epoch=1, claimed=frozenset({PROCESS}), fingerprint="f", pending=Intentions(epoch=0)
    )


def test_intentions_a_crash_left_are_folded_into_the_next_commit_except_what_its_plan_has_again():
    left = Intentions(epoch=2, release=(PLACEHOLDER, INTERIM), wrote=(INTERIM[1],), run_time=1.0, dropped=(INTERIM[1],))
    record = OwnershipRecord(version=7, epoch=3, claimed=frozenset({WORKSPACE, INTERIM}), pending=left)
    new = ledger.commit(
        record,
        [WORKSPACE, INTERIM],
        version=7,
        fingerprint="g",
        process_names=[INTERIM[1]],
        run_time=2.0,
        process_types=TYPES,
    )
    assert new.pending == Intentions(epoch=3, release=(PLACEHOLDER,), wrote=(INTERIM[1],), run_time=2.0, dropped=())
    assert ledger.done(new, 2) is new  # the old epoch's "done" does not clear the newer intentions
    assert ledger.done(new, 3).pending is None


def test_intentions_that_only_add_the_run_as_a_writer_may_be_carried_out_before_the_commit_is_saved():
    record = OwnershipRecord(version=4, epoch=2, claimed=frozenset({WORKSPACE, PROCESS}))
    new = ledger.commit(
        record, [WORKSPACE, PROCESS], version=4, fingerprint="f", process_names=[PROCESS[1]], run_time=1.0
    )
    assert new is not None and new.pending == Intentions(epoch=2, wrote=(PROCESS[1],), run_time=1.0)
    assert ledger.writers_only(record, new.pending)
    # a key let go, a process dropped, or intentions a crash left: saved first, carried out after
    assert not ledger.writers_only(record, Intentions(epoch=2, release=(PLACEHOLDER,)))
    assert not ledger.writers_only(record, Intentions(epoch=2, dropped=(INTERIM[1],)))
    left = OwnershipRecord(version=4, epoch=2, pending=Intentions(epoch=1, wrote=(INTERIM[1],), run_time=0.5))
    assert not ledger.writers_only(left, new.pending)


def test_intentions_survive_their_json_form():
    intentions = Intentions(epoch=9, release=(PLACEHOLDER, INTERIM), wrote=("p",), run_time=1.5, dropped=("q",))
    assert Intentions.from_json(intentions.to_json()) == intentions


def test_a_users_entry_is_written_once_per_claim_epoch_and_released_only_by_intentions_not_newer_than_it():
    assert ledger.claimed_epoch(None, 3) == 3
    assert ledger.claimed_epoch(3, 3) is None  # claiming again: nothing to write, nothing counted twice
    assert ledger.claimed_epoch(2, 3) == 3  # claimed again after a commit: late intentions must not release it
    assert ledger.claimed_epoch(4, 3) is None
    assert [ledger.releases(current, 3) for current in (None, 2, 3, 4)] == [False, True, True, False]
    assert [ledger.orphaned(users, legacy) for users, legacy in ((0, 0), (1, 0), (0, 2))] == [True, False, False]


def test_a_timer_date_never_goes_past_the_settling_time_while_intentions_are_pending():
    pending = OwnershipRecord(pending=Intentions(epoch=0))
    assert ledger.due_at(OwnershipRecord(), 50.0, None) is None
    assert ledger.due_at(OwnershipRecord(), 50.0, 80.0, keep_earlier=True) == 50.0
    assert ledger.due_at(OwnershipRecord(), 90.0, 80.0, keep_earlier=True) == 80.0
    assert ledger.due_at(pending, 50.0, None, now=10.0) == 50.0  # "never" waits until the intentions are done
    assert ledger.due_at(pending, None, 3600.0, now=10.0) == 10.0 + ledger.SETTLE_SECONDS
    assert ledger.due_at(pending, 50.0, 20.0, now=10.0) == 20.0


def test_writers_a_commit_adds_and_drops_and_what_must_be_restored():
    writers = [(200.0, "run-new"), (100.0, "run-old")]
    wrote = Intentions(epoch=0, wrote=("p",), run_time=300.0)
    assert ledger.writers_after(writers, "run-next", wrote, "p") == WriterChange(
        [(300.0, "run-next"), (200.0, "run-new"), (100.0, "run-old")], newest=True
    )
    older = Intentions(epoch=0, wrote=("p",), run_time=50.0)
    assert ledger.writers_after(writers, "run-older", older, "p").newest is False
    dropped = Intentions(epoch=0, dropped=("p",))
    # the newest writer drops it: restored from the next one
    assert ledger.writers_after(writers, "run-new", dropped, "p") == WriterChange([(100.0, "run-old")], "run-old")
    # an older writer drops it: the catalog shows the newest one already
    assert ledger.writers_after(writers, "run-old", dropped, "p") == WriterChange([(200.0, "run-new")])
    # carried out again after a crash: the run is gone from the list, so the restore is done again (harmless)
    assert ledger.writers_after([(100.0, "run-old")], "run-new", dropped, "p") == WriterChange(
        [(100.0, "run-old")], "run-old"
    )
    # the last writer drops it: nothing to restore from
    assert ledger.writers_after([(100.0, "run-old")], "run-old", dropped, "p") == WriterChange([])


def test_both_stores_read_a_processs_writers_from_its_list_or_from_an_older_versions_newest_only():
    assert ledger.stored_writers('[[200.0, "run-new"], [100.0, "run-old"]]', 200.0, "run-new") == [
        (200.0, "run-new"),
        (100.0, "run-old"),
    ]
    assert ledger.stored_writers(None, 100, "run-old") == [(100.0, "run-old")]


def test_a_run_uploaded_as_the_newest_while_a_newer_run_committed_restores_the_newer_one():
    # the upload was decided on the writers of `seen` (the run was the newest then, so its process was uploaded);
    # run-new committed before this run's commit: the catalog may hold this older run's process over run-new's
    seen = [(100.0, "run-old")]
    writers = [(200.0, "run-new"), (100.0, "run-old")]
    late = Intentions(epoch=0, wrote=("p",), run_time=150.0)
    assert ledger.writers_after(writers, "run-late", late, "p", seen=seen) == WriterChange(
        [(200.0, "run-new"), (150.0, "run-late"), (100.0, "run-old")], restore_from="run-new"
    )
    # seen as older than run-new already: its process was not uploaded, nothing to restore
    assert ledger.writers_after(writers, "run-late", late, "p", seen=writers).restore_from is None
    # still the newest after the other commit: nothing overwritten
    newest = Intentions(epoch=0, wrote=("p",), run_time=300.0)
    assert ledger.writers_after(writers, "run-next", newest, "p", seen=seen) == WriterChange(
        [(300.0, "run-next"), (200.0, "run-new"), (100.0, "run-old")], newest=True
    )


def test_the_settlement_lists_the_catalog_work_in_order():
    intentions = Intentions(epoch=4, release=(PLACEHOLDER, INTERIM), dropped=(INTERIM[1],))
    result = ledger.settlement(
        intentions,
        [INTERIM, PLACEHOLDER],
        {INTERIM[1]: WriterChange([(1.0, "run-old")], "run-old"), PROCESS[1]: WriterChange([], newest=True)},
    )
    assert result == CommitResult(
        orphans=(PLACEHOLDER, INTERIM), restores=((INTERIM[1], "run-old"),), newest=frozenset({PROCESS[1]})
    )
    assert result.epoch == 4 and ledger.has_catalog_work(result)
    assert not ledger.has_catalog_work(ledger.settlement(intentions, [], {}))


def test_max_writers_keeps_the_newest():
    writers: list = []
    for i in range(ledger.MAX_WRITERS + 3):
        writers = ledger.add_writer(writers, (float(i), f"run-{i:02d}"))
    assert [key for _, key in writers] == [f"run-{i:02d}" for i in range(ledger.MAX_WRITERS + 2, 2, -1)]
