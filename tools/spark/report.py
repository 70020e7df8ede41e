"""What a backfill or remap did, for the person who ran it: a table on stdout, CSV and JSON under `--report DIR`.

Counts add up across tasks (`Tally.add`), so the Spark job and the single-process runner build the same report.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TOP_NAMESPACES = 20
LABEL_WIDTH = 60


@dataclass
class Tally:
    """Counts that tasks add up: events read and refused (by reason), events outside the time range, runs."""

    events_read: int = 0
    outside_range: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    runs: Counter[str] = field(default_factory=Counter)  # by status: planned, waiting, skipped
    rows: Counter[str] = field(default_factory=Counter)  # system-lineage: rows read, and rows that made no run

    def add(self, other: "Tally") -> "Tally":
        return Tally(
            self.events_read + other.events_read,
            self.outside_range + other.outside_range,
            self.refused + other.refused,
            self.runs + other.runs,
            self.rows + other.rows,
        )


@dataclass
class BackfillReport:
    """Everything the table, the CSV and the JSON show."""

    command: str
    tally: Tally
    processes_planned: int = 0
    processes_written: int = 0
    processes_unchanged: int = 0
    processes_superseded: int = 0
    catalog_calls: int = 0
    bulk_requests: int = 0
    unmatched_namespaces: list[tuple[str, int]] = field(default_factory=list)  # (namespace, datasets), ranked
    dry_run_entities: int | None = None  # entities written to --dry-run OUT
    placeholders_removed: int = 0
    entities_deleted: int = 0  # what earlier plans of the runs had and no run uses any more (the run-state ledger)
    runs_recorded: int = 0  # run-history records written (finished runs that name a process)
    seconds: float = 0.0
    window: tuple[str | None, str | None] | None = None  # system-lineage: [since, until) of event_time, ISO 8601

    def count_writes(self, stats: Any, calls: int) -> None:
        """Add what the writers did (a catalog.WriteStats) and `calls` made outside them."""
        self.processes_written = stats.written
        self.processes_unchanged = stats.unchanged
        self.processes_superseded += stats.superseded
        self.bulk_requests = stats.requests
        self.entities_deleted = stats.deleted
        self.catalog_calls = calls + stats.calls

    def rows(self) -> list[tuple[str, str, Any]]:
        """(section, item, value) rows: the report as a table, CSV and the basis of the JSON."""
        t = self.tally
        rows: list[tuple[str, str, Any]] = []
        if self.window is not None:
            rows += [
                ("time range", "since", self.window[0] or "(the beginning)"),
                ("time range", "until", self.window[1] or "(now)"),
            ]
        rows += [("rows", item, count) for item, count in sorted(t.rows.items(), key=_ranked)]
        rows += [
            ("events", "read", t.events_read),
            ("events", "accepted", t.events_read - sum(t.refused.values())),
            ("events", "refused", sum(t.refused.values())),
            ("events", "outside the time range", t.outside_range),
        ]
        rows += [("refused", reason, count) for reason, count in sorted(t.refused.items(), key=_ranked)]
        rows += [
            ("runs", "total", sum(t.runs.values())),
            ("runs", "with lineage", t.runs["planned"]),
            ("runs", "not finished (waiting)", t.runs["waiting"]),
            ("runs", "nothing to write (skipped)", t.runs["skipped"]),
            ("processes", "planned", self.processes_planned),
            ("processes", "written", self.processes_written),
            ("processes", "unchanged", self.processes_unchanged),
            ("processes", "superseded", self.processes_superseded),
            ("catalog", "calls", self.catalog_calls),
            ("catalog", "bulk requests", self.bulk_requests),
            ("catalog", "entities no run uses any more, deleted", self.entities_deleted),
            ("history", "runs recorded", self.runs_recorded),
        ]
        if self.command == "remap":
            rows.append(("catalog", "placeholders removed", self.placeholders_removed))
        if self.dry_run_entities is not None:
            rows.append(("dry run", "entities written", self.dry_run_entities))
        rows += [("unmatched namespaces", namespace, datasets) for namespace, datasets in self.unmatched_namespaces]
        rows.append(("time", "seconds", round(self.seconds, 1)))
        return rows

    def table(self) -> str:
        rows = self.rows()
        width = min(LABEL_WIDTH, max(len(f"{section}: {item}") for section, item, _ in rows))
        lines = [f"ol2purview spark {self.command}"]
        for section, item, value in rows:
            label = fit(f"{section}: {item}", width)
            lines.append(
                f"  {label:<{width}}  {value:>10}"
                if isinstance(value, (int, float))
                else f"  {label:<{width}}  {value}"
            )
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        t = self.tally
        return {
            "command": self.command,
            **({"timeRange": {"since": self.window[0], "until": self.window[1]}} if self.window is not None else {}),
            **({"rows": dict(sorted(t.rows.items(), key=_ranked))} if t.rows else {}),
            "events": {"read": t.events_read, "refused": sum(t.refused.values()), "outsideTimeRange": t.outside_range},
            "refusedByReason": dict(sorted(t.refused.items(), key=_ranked)),
            "runs": {
                "total": sum(t.runs.values()),
                "withLineage": t.runs["planned"],
                "waiting": t.runs["waiting"],
                "skipped": t.runs["skipped"],
            },
            "processes": {
                "planned": self.processes_planned,
                "written": self.processes_written,
                "unchanged": self.processes_unchanged,
                "superseded": self.processes_superseded,
            },
            "catalog": {
                "calls": self.catalog_calls,
                "bulkRequests": self.bulk_requests,
                "placeholdersRemoved": self.placeholders_removed,
                "entitiesDeleted": self.entities_deleted,
            },
            "history": {"runsRecorded": self.runs_recorded},
            "unmatchedNamespaces": [{"namespace": ns, "datasets": n} for ns, n in self.unmatched_namespaces],
            "dryRunEntities": self.dry_run_entities,
            "seconds": round(self.seconds, 3),
        }

    def write(self, folder: Path) -> tuple[Path, Path]:
        """`report.csv` (section, item, value) and `report.json` in `folder` (created)."""
        folder.mkdir(parents=True, exist_ok=True)
        csv_path, json_path = folder / "report.csv", folder / "report.json"
        with open(csv_path, "w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(("section", "item", "value"))
            writer.writerows(tuple(map(_cell, row)) for row in self.rows())
        json_path.write_text(json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return csv_path, json_path


def fit(label: str, width: int) -> str:
    """A label on one line (line breaks and runs of spaces as one space), cut to `width` with "…" when longer; the
    CSV and the JSON keep it whole."""
    label = " ".join(label.split())
    return label if len(label) <= width else label[: width - 1] + "…"


def ranked_namespaces(counts: dict[str, int], top: int = TOP_NAMESPACES) -> list[tuple[str, int]]:
    """Namespaces by dataset count, most first (ties by name)."""
    return sorted(counts.items(), key=_ranked)[:top]


def _cell(value: Any) -> Any:
    """A CSV cell that a spreadsheet will not run as a formula (namespaces come from events)."""
    return "'" + value if isinstance(value, str) and value[:1] in ("=", "+", "-", "@") else value


def _ranked(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]
