"""What a backfill or remap runs with (one picklable value the Spark driver broadcasts to its executors), and the
steps both runners (Spark and single-process) share around the per-run work. The catalog client, the run-state store
and the run history are built by the live path's composition root (olparser/adapters/runtime.py `Runtime`), as are
the writers' uploader and resolver (tools/spark/catalog.py `PlanWriter`).

The mapping rules travel as text inside the job, so that an executor maps with exactly the driver's rules (its own
copy of config/ is never read); each Python worker compiles them once.
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Iterator

from olparser.adapters.catalog import RetryPolicy, load_typedefs, resolve_target, retry_for
from olparser.adapters.rules_file import rules_source
from olparser.adapters.runtime import Runtime
from olparser.adapters.sql.process_parser import SqlParser
from olparser.catalog_rules import REQUEST, used_by
from olparser.contract import IntakeLimits
from olparser.history import RunHistoryStore, RunRecord, relink_record
from olparser.jsontypes import JSON
from olparser.lineage import LineageOptions
from olparser.lineage.combine import without_placeholders
from olparser.lineage.datasets import PLACEHOLDER_TYPE
from olparser.lineage.entities import Key, key_of
from olparser.naming import MappingEngine
from olparser.pipeline import WritePolicy
from olparser.runs import RunStateStore
from olparser.settings import TYPEDEFS_DIR, Settings

from .catalog import RateLimiter, ThrottledClient, WriteStats, delete_entities, read_entities
from .records import AcceptedRecord, in_time_range, read_record
from .report import BackfillReport, Tally
from .runs import PLANNED, RunResult, Selected

# Purview: one capacity unit serves about 25 operations per second; leave room for the live path.
DEFAULT_CALLS_PER_SECOND = 20.0
_engines: dict[str, MappingEngine] = {}
_engines_lock = threading.Lock()
_sql_parsers: dict[tuple[int, float], SqlParser] = {}


def rules_read(command: str, settings: Settings) -> str:
    """The line a Spark command prints before its job reads the rules: which file (every command says it)."""
    return f"{command}: mapping rules from {rules_source(settings)}"


@dataclass(frozen=True)
class BackfillJob:
    """Settings (rules inline), the eventTime range [since, until) in Unix seconds, and the global call rate."""

    settings: Settings
    since: float | None = None
    until: float | None = None
    calls_per_second: float | None = DEFAULT_CALLS_PER_SECOND

    @classmethod
    def create(cls, settings: Settings, **kwargs: object) -> "BackfillJob":
        """A job whose settings carry the rules as text (read once here, from the file or the inline setting)."""
        rules = settings.mappings_inline or Path(settings.mappings_path).read_text(encoding="utf-8")
        return cls(replace(settings, mappings_inline=rules), **kwargs)  # type: ignore[arg-type]

    def engine(self) -> MappingEngine:
        """The mapping engine for the job's rules, compiled once per Python process."""
        text = self.settings.mappings_inline or ""
        with _engines_lock:
            if text not in _engines:
                _engines[text] = MappingEngine.from_json_text(text)
            return _engines[text]

    def sql_parser(self) -> SqlParser | None:
        """The SQL parser for column lineage from a run's SQL (SQL_COLUMN_LINEAGE), one per Python process; its
        worker processes start on the first statement that needs them."""
        if not self.settings.sql_column_lineage:
            return None
        key = (self.settings.max_sql_chars, self.settings.sql_parse_timeout_seconds)
        with _engines_lock:
            if key not in _sql_parsers:
                _sql_parsers[key] = SqlParser.from_settings(self.settings)
            return _sql_parsers[key]

    def policy(self) -> WritePolicy:
        """The live path's write policy and per-run limits (MAX_DATASETS_PER_RUN), with nothing held: every event
        of a run is there."""
        return WritePolicy.from_settings(self.settings).complete()

    def limits(self) -> IntakeLimits:
        return IntakeLimits.from_settings(self.settings)

    def options(self) -> LineageOptions:
        return LineageOptions.from_settings(self.settings)

    def client(self, share: int = 1) -> ThrottledClient:
        """A catalog client limited to this task's share of the global call rate (`share` tasks at once)."""
        rate = self.calls_per_second / share if self.calls_per_second else None
        target = resolve_target(self.settings)
        if target.endpoint is None:
            raise ValueError(
                "no catalog: pass --atlas-url URL, set PURVIEW_ACCOUNT_NAME, PURVIEW_ENDPOINT or ATLAS_ENDPOINT, or start "
                "`ol2purview serve` (its data folder: --data DIR); or use --dry-run"
            )
        return ThrottledClient(Runtime(self.settings).catalog_client(), RateLimiter(rate))

    def retry(self) -> RetryPolicy:
        return retry_for(REQUEST, self.settings)

    def run_state(self) -> RunStateStore:
        """The live path's run-state store (RUN_STATE_STORE: SQLite in the data folder, or Table storage), opened
        anew by each task; close it after use. The writes keep its ledger of what each run has written and its
        registry of interim datasets, as the live path does."""
        return Runtime(self.settings).run_state_store()

    def history(self) -> RunHistoryStore:
        """The run history the live path keeps (next to its run state: SQLite in the data folder, or Table storage),
        opened anew by each task; close it after use."""
        return Runtime(self.settings).history_store()


def record_history(job: BackfillJob, records: Iterable[RunRecord], now: float | None = None) -> int:
    """Write runs' history records into the job's run history, as the live path does; how many it keeps (a run that
    started longer than RUN_HISTORY_DAYS ago is not recorded, so it is not counted either)."""
    history = job.history()
    cutoff = (time.time() if now is None else now) - getattr(history, "retention_seconds", float("inf"))
    try:
        count = 0
        for record in records:
            history.record(record, now=now, keep_changes=False)  # the writes that follow give every process its counts
            count += record.facts.start >= cutoff
        return count
    finally:
        history.close()


def relink_history(job: BackfillJob, records: Iterable[RunRecord], links: dict[Key, Key]) -> int:
    """After the writes: the runs' records again, with their datasets linked as the writes linked them (`links`,
    from every writer), so that the history names what the catalog holds, as the live path's does; written again
    only where a name changed (replacing the record). Returns how many were."""
    if not links:
        return 0
    history = job.history()
    try:
        count = 0
        for record in records:
            linked = relink_record(record, links)
            if linked is not record:
                history.record(linked, keep_changes=False)
                count += 1
        return count
    finally:
        history.close()


TALLY_KEY = "\x00tally"


def keyed_records(job: BackfillJob, bodies: Iterable[bytes | Exception]) -> Iterator[tuple[str, object]]:
    """(run key, zlib-compressed event JSON) for every accepted event in range, then (TALLY_KEY, Tally) counting what
    was read. Compressed, because every event crosses the shuffle (or waits in memory) until its run is merged:
    Spark events repeat their producers, schemas and column names, so this is 10-20 times less to move."""
    limits = job.limits()
    tally = Tally()
    for body in bodies:
        tally.events_read += 1
        record = read_record(body, limits)  # type: ignore[arg-type]
        if not isinstance(record, AcceptedRecord):
            tally.refused[record.reason] += 1
        elif not in_time_range(record, job.since, job.until):
            tally.outside_range += 1
        else:
            yield record.key, zlib.compress(record.event_json, 1)
    yield TALLY_KEY, tally


def is_planned(result: RunResult) -> bool:
    return result.status == PLANNED


def planned_entities(selected: Selected) -> list[tuple[Key, JSON]]:
    """The entities a selected plan writes, as the dry run lists them: references by qualifiedName, no guids."""
    if selected.plan is None:
        return []
    return [(key_of(e), without_placeholders(e)) for e in (*selected.plan.external_datasets, *selected.plan.entities)]


def write_dry_run(out: Path, entities: Iterable[JSON]) -> int:
    """One entity per JSON line; returns how many."""
    out.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with open(out, "w", encoding="utf-8") as stream:
        for entity in entities:
            stream.write(json.dumps(entity, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n")
            count += 1
    return count


def register_typedefs(client: ThrottledClient, job: BackfillJob) -> int:
    """Create or update the connector's types before the first write (as the live path does); returns the calls."""
    from olparser.adapters.catalog import register_typedefs as register

    return register(client, load_typedefs(TYPEDEFS_DIR), job.retry()).calls


def finish_writes(
    report: BackfillReport, client: ThrottledClient, job: BackfillJob, stats: WriteStats, calls: int
) -> None:
    """Count what the writers did; a remap then removes the placeholders that processes stopped referencing."""
    report.count_writes(stats, calls)
    if report.command == "remap":
        report.placeholders_removed, more_calls = remove_unused_placeholders(client, job, stats.placeholders)
        report.catalog_calls += more_calls


def remove_unused_placeholders(client: ThrottledClient, job: BackfillJob, names: Iterable[str]) -> tuple[int, int]:
    """Delete the placeholders among `names` that no ACTIVE process references any more (with their columns);
    returns (placeholders removed, calls). What the run-state ledger knows it deletes itself; this sweeps what it
    does not know (lineage written before the ledger, or with another run-state store)."""
    calls = [0]
    retry = job.retry()
    held = read_entities(
        Runtime(job.settings, catalog_client=client).catalog_uploader(),
        ((PLACEHOLDER_TYPE, name) for name in names),
        calls,
    )
    unused = [entity for entity in held.values() if not used_by(entity)]
    columns = [
        column
        for entity in unused
        for column in (entity.get("relationshipAttributes") or {}).get("columns") or []
        if isinstance(column, dict) and column.get("entityStatus", "ACTIVE") == "ACTIVE"
    ]
    if unused:
        delete_entities(client, retry, [*columns, *unused], calls)
    return len(unused), calls[0]
