"""Group commit: concurrent writers share one durable commit (one transaction, one fsync) instead of one each.

A caller hands its item to `submit` and is answered only once a commit that contains it has returned, so "submit
returned" still means "on disk". The first caller to find no commit running leads: it waits up to `window` seconds
for company (or until `max_items` are waiting), commits what is waiting, and repeats until its own item is in; the
others sleep meanwhile, and whoever comes during a commit rides in the next one. With one writer at a time the window
is skipped, so a lone request pays nothing for it: the window opens only when the previous commit was shared.
A failed commit raises in every caller whose item it held.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class _Ticket(Generic[T, R]):
    __slots__ = ("item", "done", "result", "error")

    def __init__(self, item: T) -> None:
        self.item = item
        self.done = False
        self.result: R | None = None
        self.error: BaseException | None = None


class GroupCommit(Generic[T, R]):
    """`commit(items)` writes the items durably in one go and returns one result per item, in order."""

    def __init__(self, commit: Callable[[list[T]], list[R]], window: float = 0.002, max_items: int = 256) -> None:
        if window < 0 or max_items < 1:
            raise ValueError("window must be >= 0 and max_items >= 1")
        self._commit = commit
        self._window = window
        self._max_items = max_items
        self._cond = threading.Condition()
        self._waiting: list[_Ticket[T, R]] = []
        self._leading = False
        self._shared = False  # the previous commit held more than one item: concurrent writers are about
        self.commits = 0  # how many commits ran (for tests and benches)

    def submit(self, item: T) -> R:
        ticket: _Ticket[T, R] = _Ticket(item)
        with self._cond:
            self._waiting.append(ticket)
            if len(self._waiting) >= self._max_items:
                self._cond.notify_all()  # a leader waiting for company has enough
            while not ticket.done and self._leading:
                self._cond.wait()
            if not ticket.done:
                self._leading = True
        if not ticket.done:
            self._lead(ticket)
        if ticket.error is not None:
            raise ticket.error
        # Why the type error is ignored: no error: the leader set the ticket's result
        return ticket.result  # type: ignore[return-value]

    def _lead(self, own: _Ticket[T, R]) -> None:
        try:
            while not own.done:
                with self._cond:
                    if self._shared and self._window > 0:
                        deadline = time.monotonic() + self._window
                        while len(self._waiting) < self._max_items and (left := deadline - time.monotonic()) > 0:
                            self._cond.wait(left)
                    batch, self._waiting = self._waiting[: self._max_items], self._waiting[self._max_items :]
                self._run(batch)
        finally:
            with self._cond:
                self._leading = False
                self._cond.notify_all()

    def _run(self, batch: list[_Ticket[T, R]]) -> None:
        try:
            results = self._commit([ticket.item for ticket in batch])
            if len(results) != len(batch):
                raise RuntimeError(f"a group commit returned {len(results)} results for {len(batch)} items")
        except BaseException as exc:  # every writer in the batch learns that its item is not stored
            for ticket in batch:
                ticket.error = exc
        else:
            for ticket, result in zip(batch, results, strict=True):
                ticket.result = result
        with self._cond:
            self.commits += 1
            self._shared = len(batch) > 1
            for ticket in batch:
                ticket.done = True
            self._cond.notify_all()
