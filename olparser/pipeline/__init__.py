"""The runner that orders the steps: merge → decide → build → resolve → link → claim → upload → commit → delete what
no run uses.

The catalog must end up the same whatever the order in which a run's events are processed, with duplicates and with
concurrent workers: exactly what processing every event in order gives. Three rules get it there.

1. **A run's plan replaces what the run wrote before.** Each run (or static declaration) remembers the keys of the
   connector-owned entities its last plan contained; each such entity counts the runs whose plans contain it. When a
   run writes a new plan, what its old plan had and the new one lacks (a process under a generic owner that the
   Databricks environment facet later replaced, a `/mnt` placeholder that its mount points later resolved) loses a
   user, and an entity left without users is deleted from the catalog. The protocol is safe against concurrent
   writers: a run is counted as a user (`claim`) before it uploads, an entity is tombstoned while it is deleted, and
   a writer that claims a tombstoned entity waits for the deletion to finish before uploading it.
2. **A process shows its newest run.** Every process remembers the time of the newest run that wrote it; a late
   event of an older run (a requeued poison message, a retry) leaves that process alone ("superseded"), but still
   writes the datasets and owners its plan needs, as in-order processing would have.
3. **A plan is built from the newest state.** If the run was merged again (by another worker) while its plan was
   being written, the plan is built again from the newer state and written again.

The run history (olparser.history, optional) records every run that ends or is written as INCOMPLETE, from the
run's plan — FAIL and ABORT runs too, whose plan is built but not uploaded — before the plan's processes get their
`runCount` and `firstRunTime` from it. A run that joins, leaves or moves in a process's history without writing
that process (a failed run, an older run arriving late, a run whose plan dropped it) has the process rewritten from
its newest writer, so that the catalog ends up as in-order processing leaves it. The history keeps the processes a
run changed until the runner says they are rewritten: a worker that dies in between leaves them to the redelivery. The
timer purges old history.

Temporary datasets (olparser/lineage/edges.py): a run that writes one records, in the run-state store, what it
passes on (its inputs); a run that reads one is noted as its reader when its plan looks the writers up. A writer that
comes after a reader gives the reader a new version (a plan of it being built is stale and built again) and writes
again each reader already written, after releasing its own run's lock: the catalog ends up as in-order processing
leaves it, whichever run comes first.

When: a COMPLETE run is written at once; a Databricks run whose environment facet has not arrived yet is held for
`environment_wait_seconds` (the RUNNING that carries it is usually processed within the same queue batch); a run that
has datasets but no terminal event is written as INCOMPLETE after `incomplete_run_seconds` by the timer
(`write_due`), which also retries deletions that failed. FAIL and ABORT write nothing unless `lineage_on_failure`
(and remove what an INCOMPLETE write of the run had put there).

Resolve and link (when a resolver is given): the plan's datasets are looked up against the assets Purview's scanners
registered (`olparser/adapters/catalog/resolver.py`) and the plan is rewritten to reference them
(`olparser/lineage/link.py`)
before it is fingerprinted, so the ledger and the fingerprint see what is actually written. A dataset left on its
rule identity although it has candidates (an interim dataset) is connector-owned: registered in the run-state store
when the upload creates it, re-resolved later by the re-link timer (`olparser/pipeline/relink.py`). A scanned asset that
vanished between resolution and upload (404 on its reference) is forgotten and the plan resolved again.

The catalog write itself — claim, the newer-run test, upload with the interim datasets registered, commit, then
delete, restore and done — is the one write procedure (`olparser/pipeline/writing.py`), which the Spark paths use too; this
runner adds what a single live run needs around it (rebuilds, the history, the streaming window, the log lines).

It owns no I/O of its own: the run-state store, the resolver and the catalog uploader are passed in, so the same runner
serves the queue trigger in Azure, the local host, the tests and the benchmarks.

policy       WritePolicy, decide (write/wait/hold/skip, shared with the Spark paths), LineageOutcome, DueReport
runner       LineagePipeline: the queue trigger, the timer's due runs, temporary readers, the take-over
run_writer   RunWriter (the runner has one): one run's plan built, linked and written, and what follows
writing      CatalogWrite (store, uploader, resolver, history, process locks) and the one write procedure
ports        the typed interfaces the pipeline drives (run state, history, rules, catalog, resolver)
timer        the timer's tick: due runs written or postponed, deletions retried, purges
lifecycle    apply_lifecycle: dropped and renamed tables (live and Spark paths)
temporary    temporary datasets in the run-state store: what a writer passes on, what a reader finds
takeover     a notebook run's take-over of its session-specific processes
reporting    the "no mapping rule" and note lines, said once (ReportedOnce)
"""

from olparser.runs.rules import RunStatus

from .lifecycle import apply_lifecycle
from .policy import Decision, DueReport, LineageOutcome, WritePolicy, decide
from .reporting import ReportedOnce
from .runner import LineagePipeline

__all__ = [
    "Decision",
    "DueReport",
    "LineageOutcome",
    "LineagePipeline",
    "ReportedOnce",
    "RunStatus",
    "WritePolicy",
    "apply_lifecycle",
    "decide",
]
