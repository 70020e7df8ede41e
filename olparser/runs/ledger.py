"""The ownership ledger: what each run owns in the catalog, as pure functions over plain data. Both run-state stores
(olparser/adapters/run_state) load the rows these functions need and save what they return under their own atomic
write; neither decides anything itself.

Four kinds of bookkeeping (see olparser/pipeline/__init__.py for the protocol that uses them):

- **the run's record** (`OwnershipRecord`): the keys it claimed (what its plans may have uploaded), its commit `epoch`
  (how many commits it has made), the fingerprint of what it last wrote, and its pending `Intentions`;
- **users of an entity**: one entry per run that claims it, holding the epoch of the claim. A set, not a counter:
  claiming again (a retry, a redelivered message, a second instance) finds its own entry and changes nothing, so a
  run can never be counted twice; an entity is orphaned exactly when its last entry goes;
- **writers of a process**: the newest runs whose plans contain it (`add_writer`, `drop_writer`), so that a late
  event of an older run leaves it alone and a run that drops it hands it back to the newest run still having it;
- **intentions**: what a commit decided and has not carried out yet — users to release, writers to add and drop,
  and from them the entities to delete and the processes to restore. They are saved in the same atomic write as the
  commit, carried out after it by whoever handles the run next (or the timer), and cleared when done, so a crash
  between any two writes leaves them to be carried out again. Every step is idempotent: releasing an entry that is
  gone, adding a writer already there, deleting an entity already deleted or restoring a process already restored
  changes nothing.

A release only removes an entry whose epoch is not newer than the commit that decided it: intentions carried out
late (by a worker that crashed, or by the timer) can never release a claim that the run made again afterwards.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Sequence

Key = tuple[str, str]  # (typeName, qualifiedName) of a connector-owned entity
Writer = tuple[float, str]  # (run time, run key) of a run whose plan contains a process
MAX_WRITERS = 8  # the newest runs remembered per process, to restore it when the newest one drops it
SETTLE_SECONDS = 60.0  # a commit's intentions not carried out by then are the timer's to carry out
# `writers_after`'s `seen` when intentions are carried out again (`settle`): what the upload was decided on is not
# known, so it is taken to have uploaded (as for a drop: restoring again from the newest writer is harmless)
AGAIN: tuple[Writer, ...] = ()


def sorted_keys(keys: Iterable[Key]) -> list[Key]:
    return sorted({(str(t), str(q)) for t, q in keys})


@dataclass(frozen=True)
class Intentions:
    """What a commit decided, recorded with it and carried out after it. `epoch`: the run's commit counter before
    that commit (a release removes only users entries claimed at or before it). `release`: keys the run lets go
    (those left without users are tombstoned and deleted). `wrote`: processes the run writes, at `run_time` (it
    becomes one of their writers). `dropped`: processes it no longer writes (it stops being one of their writers;
    each is restored from its newest remaining writer when this run was the newest)."""

    epoch: int
    release: tuple[Key, ...] = ()
    wrote: tuple[str, ...] = ()
    run_time: float | None = None
    dropped: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "epoch": self.epoch,
            "release": [list(k) for k in self.release],
            "wrote": list(self.wrote),
            "runTime": self.run_time,
            "dropped": list(self.dropped),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Intentions":
        return cls(
            epoch=int(data["epoch"]),
            release=tuple((str(t), str(q)) for t, q in data.get("release", ())),
            wrote=tuple(data.get("wrote", ())),
            run_time=data.get("runTime"),
            dropped=tuple(data.get("dropped", ())),
        )


@dataclass(frozen=True)
class OwnershipRecord:
    """The ownership part of a run's (or static declaration's) row. `version`: bumped by every merge of an event
    (kept by the store; a commit names the version its plan was built from)."""

    version: int = 0
    epoch: int = 0
    claimed: frozenset[Key] = frozenset()
    fingerprint: str | None = None
    pending: Intentions | None = None


@dataclass(frozen=True)
class CommitResult:
    """What `commit` (or carrying out pending intentions) left for the catalog. `stale`: the run was merged again
    since the plan was built (nothing was recorded; build the plan again from the newer state). `orphans`: entities
    no run uses any more, tombstoned: delete them from the catalog, then call `finish_deletes`. `restores`: processes
    this run wrote last and no longer has, that older runs still have — (process qualifiedName, key of the newest of
    those runs): write them again from that run. `newest`: of the run's processes, those whose newest writer it now
    is. `epoch`: the intentions' epoch, for `done` once the catalog work is carried out (None: nothing pending)."""

    stale: bool = False
    orphans: tuple[Key, ...] = ()
    restores: tuple[tuple[str, str], ...] = ()
    newest: frozenset[str] = frozenset()
    epoch: int | None = field(default=None, compare=False)


# --- the run's record --------------------------------------------------------------------------------------------


def claim(record: OwnershipRecord, keys: Iterable[Key]) -> OwnershipRecord:
    """Before uploading a plan: the run may upload `keys` (its next commit releases those its plan then lacks)."""
    wanted = frozenset(sorted_keys(keys))
    return record if wanted <= record.claimed else replace(record, claimed=record.claimed | wanted)


def commit(
    record: OwnershipRecord,
    keys: Iterable[Key],
    *,
    version: int | None,
    fingerprint: str,
    process_names: Sequence[str] = (),
    run_time: float | None = None,
    dangling: Iterable[Key] = (),
    process_types: frozenset[str] = frozenset(),
) -> OwnershipRecord | None:
    """After uploading a plan built from the run's state at `version` (None: static lineage, not versioned): the
    record with `keys` as what the run has, and the intentions that carry the change out. None when the run was
    merged since (`version` is not the record's). `dangling`: keys this writer uploaded in an earlier attempt that
    the run never claimed (released like the rest: orphaned if nobody uses them). Intentions not yet carried out are
    folded into the new ones."""
    if version is not None and record.version != version:
        return None
    kept = frozenset(sorted_keys(keys))
    removed = record.claimed - kept
    release = set(removed | (frozenset(sorted_keys(dangling)) - kept))
    wrote = tuple(dict.fromkeys(process_names)) if run_time is not None else ()
    dropped = {name for type_name, name in removed if type_name in process_types}
    if record.pending is not None:  # a crash left them: what the new plan has again is no longer released
        release |= set(record.pending.release) - kept
        dropped |= set(record.pending.dropped) - set(process_names)
    intentions = Intentions(
        epoch=record.epoch,
        release=tuple(sorted(release)),
        wrote=wrote,
        run_time=run_time,
        dropped=tuple(sorted(dropped)),
    )
    return replace(record, epoch=record.epoch + 1, claimed=kept, fingerprint=fingerprint, pending=intentions)


def writers_only(record: OwnershipRecord, intentions: Intentions) -> bool:
    """Whether a commit's `intentions` only make the run a writer of the processes it wrote, with none a crash left
    before (`record`: the run as the commit read it). Such intentions are carried out before the commit is saved
    (olparser/runs/ownership.py), which saves them only when they leave a restore: adding a writer again changes
    nothing, so a crash in between loses nothing (the message comes back and commits again)."""
    return record.pending is None and not intentions.release and not intentions.dropped


def done(record: OwnershipRecord, epoch: int) -> OwnershipRecord:
    """The intentions of epoch `epoch` are carried out: cleared (newer ones, from a later commit, stay)."""
    if record.pending is None or record.pending.epoch != epoch:
        return record
    return replace(record, pending=None)


def due_at(
    record: OwnershipRecord,
    current: float | None,
    wanted: float | None,
    *,
    keep_earlier: bool = False,
    now: float = 0.0,
) -> float | None:
    """When the timer should look at the run: `wanted` (None: never), or the `current` time when `keep_earlier` and
    it is earlier — but never later than SETTLE_SECONDS from `now` while intentions are pending, so that they are
    carried out even if no event of the run comes again."""
    at = current if keep_earlier and current is not None and (wanted is None or current < wanted) else wanted
    if record.pending is not None:
        settle_by = current if current is not None else now + SETTLE_SECONDS
        at = settle_by if at is None else min(at, settle_by)
    return at


# --- users of an entity ------------------------------------------------------------------------------------------


def claimed_epoch(current: int | None, epoch: int) -> int | None:
    """The epoch to record for a run claiming an entity at `epoch` when its entry holds `current` (None: no entry);
    None when the entry already says so (nothing to write: claiming again counts nothing)."""
    return None if current is not None and current >= epoch else epoch


def releases(current: int | None, epoch: int) -> bool:
    """Whether intentions of `epoch` remove the run's entry holding `current`: not when gone, nor when the run
    claimed the entity again after that commit."""
    return current is not None and current <= epoch


def orphaned(users: int, legacy: int = 0) -> bool:
    """No run uses the entity (`legacy`: users counted by an older version of the store, never released)."""
    return users + legacy <= 0


# --- writers of a process ----------------------------------------------------------------------------------------


def add_writer(writers: Sequence[Writer], writer: Writer) -> list[Writer]:
    """The newest MAX_WRITERS of `writers` and `writer`, newest first (one entry per run key)."""
    kept = {key: (float(time_), key) for time_, key in writers}
    kept[writer[1]] = (float(writer[0]), writer[1])
    return sorted(kept.values(), reverse=True)[:MAX_WRITERS]


def stored_writers(listed: str | None, run_time: float, run_key: str) -> list[Writer]:
    """A process's writers as both stores keep them, newest first: the JSON list `listed`, or, in a row of a version
    that kept only the newest, that one (`run_time`, `run_key`)."""
    if listed:
        return [(float(t), str(k)) for t, k in json.loads(listed)]
    return [(float(run_time), str(run_key))]


def drop_writer(writers: Sequence[Writer], run_key: str) -> tuple[list[Writer], bool]:
    """`writers` without `run_key`, and whether it was the newest."""
    rest = [(float(time_), key) for time_, key in writers if key != run_key]
    return rest, bool(writers) and writers[0][1] == run_key


@dataclass(frozen=True)
class WriterChange:
    """A process's writers after the intentions: `restore_from` the newest remaining writer when the process must
    be written again from it; `newest` when the run is now its newest writer."""

    writers: list[Writer]
    restore_from: str | None = None
    newest: bool = False


def writers_after(
    writers: Sequence[Writer],
    run_key: str,
    intentions: Intentions,
    name: str,
    *,
    seen: Sequence[Writer] | None = None,
) -> WriterChange:
    """Carry out the intentions' part for process `name`. A drop restores the process when the run was its newest
    writer — or when the run is no longer listed at all (the drop was carried out before a crash: restoring again
    from the newest writer is harmless, forgetting it is not). `seen`: the writers the run's upload was decided on
    (`newer_writers`); when they made the run the newest and a newer run committed since, the upload may have
    overwritten that run's process in the catalog: it is restored from the newest writer (`AGAIN`: carried out
    again, after a crash or for a batch path that left its restores to the timer, the upload is taken as made)."""
    current = [(float(t), str(k)) for t, k in writers]
    if name in intentions.dropped:
        listed = any(key == run_key for _, key in current)
        rest, was_newest = drop_writer(current, run_key)
        again = rest and (was_newest or not listed)
        return WriterChange(rest, restore_from=rest[0][1] if again else None)
    if name in intentions.wrote and intentions.run_time is not None:
        writer = (intentions.run_time, run_key)
        added = add_writer(current, writer)
        newest = added[0][1] == run_key
        uploaded = seen is not None and add_writer(seen, writer)[0][1] == run_key
        return WriterChange(added, restore_from=added[0][1] if uploaded and not newest else None, newest=newest)
    return WriterChange(current)


def settlement(intentions: Intentions, orphans: Iterable[Key], changes: dict[str, WriterChange]) -> CommitResult:
    """What carrying out `intentions` leaves for the catalog, from the entities left without users and the writer
    changes of each process."""
    restores = tuple(
        (name, change.restore_from) for name, change in sorted(changes.items()) if change.restore_from is not None
    )
    newest = frozenset(name for name, change in changes.items() if change.newest)
    return CommitResult(orphans=tuple(sorted_keys(orphans)), restores=restores, newest=newest, epoch=intentions.epoch)


def has_catalog_work(result: CommitResult) -> bool:
    return bool(result.orphans or result.restores)
