"""The timers log at INFO only when a tick did something, at DEBUG otherwise (#23 item 8)."""

from __future__ import annotations

import logging
from dataclasses import replace
from types import SimpleNamespace

import pytest

import function_app
from olparser.pipeline import DueReport
from olparser.pipeline.accelerator import Takeovers
from olparser.pipeline.relink import RelinkReport


class Runtime:
    """The parts the timers' operations use (olparser/adapters/operations.py), answering with the given reports: the
    runner's tick, the poison queue's length (`due.poison_waiting`) and the re-link timer's worker."""

    def __init__(self, due: DueReport = DueReport(), relink: RelinkReport = RelinkReport()) -> None:
        self.due, self.relink = due, relink
        self.settings = SimpleNamespace(lineage_queue="lineage-events", relink_batch_size=200)

    def pipeline(self) -> SimpleNamespace:
        return SimpleNamespace(write_due=lambda now=None: replace(self.due, poison_waiting=0))

    def queue_service(self) -> SimpleNamespace:
        poison = SimpleNamespace(approximate_count=lambda: self.due.poison_waiting)
        return SimpleNamespace(queue=lambda name: poison if name == "lineage-events-poison" else None)

    def relinker(self) -> SimpleNamespace:
        return SimpleNamespace(run=lambda now=None: self.relink)

    # the re-link tick also looks for the successors of the accelerator's processes taken over: none here
    def run_state_store(self) -> SimpleNamespace:
        return SimpleNamespace(pending_takeovers=lambda: [])

    def catalog_uploader(self) -> None:
        return None

    def resolver(self) -> None:
        return None

    def takeovers(self) -> Takeovers:
        return Takeovers()


@pytest.mark.parametrize(
    "report,level",
    [
        (DueReport(), logging.DEBUG),
        (DueReport(written=2), logging.INFO),
        (DueReport(failed=1), logging.INFO),
        (DueReport(deletes_retried=1), logging.INFO),
        (DueReport(purged=40), logging.INFO),
        (DueReport(history_purged=3), logging.INFO),
    ],
)
def test_the_due_runs_timer(monkeypatch, caplog, report, level):
    monkeypatch.setattr(function_app, "process_runtime", lambda: Runtime(due=report))
    with caplog.at_level(logging.DEBUG, logger="ol2purview"):
        function_app.write_due_runs(SimpleNamespace(past_due=False))
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (
            level,
            (
                f"Timer: written={report.written} failed={report.failed} deletesRetried={report.deletes_retried} "
                f"purged={report.purged} historyPurged={report.history_purged} pastDue=False"
            ),
        )
    ]


@pytest.mark.parametrize(
    "report,level",
    [
        (RelinkReport(), logging.DEBUG),
        (RelinkReport(checked=200, calls=3), logging.DEBUG),  # looked again, nothing new was scanned
        (RelinkReport(checked=5, relinked=1, processes=2, deleted=1, calls=6), logging.INFO),
        (RelinkReport(retired=1, calls=3), logging.INFO),  # an accelerator process gave way to its successor
    ],
)
def test_the_relink_timer(monkeypatch, caplog, report, level):
    monkeypatch.setattr(function_app, "process_runtime", lambda: Runtime(relink=report))
    with caplog.at_level(logging.DEBUG, logger="ol2purview"):
        function_app.relink_scanned_assets(SimpleNamespace(past_due=False))
    [logged] = caplog.records
    assert (logged.levelno, logged.getMessage()) == (
        level,
        (
            f"Re-link: checked={report.checked} relinked={report.relinked} processes={report.processes} "
            f"deleted={report.deleted} kept={report.kept} retired={report.retired} calls={report.calls}"
        ),
    )


def test_the_timer_warns_while_the_poison_queue_holds_messages(monkeypatch, caplog):
    monkeypatch.setattr(function_app, "process_runtime", lambda: Runtime(due=DueReport(poison_waiting=2)))
    with caplog.at_level(logging.DEBUG, logger="ol2purview"):
        function_app.write_due_runs(SimpleNamespace(past_due=False))
    assert [(r.levelno, r.getMessage()) for r in caplog.records][1:] == [
        (
            logging.WARNING,
            (
                "lineage-events-poison holds 2 message(s): fix the cause, then `ol2purview requeue --all` "
                "(docs/guides/operations.md)"
            ),
        )
    ]
    assert caplog.records[0].levelno == logging.DEBUG  # nothing else happened: the Timer line stays at DEBUG
