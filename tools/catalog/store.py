"""SQLite persistence for the catalog: typedefs, entities, relationships and account settings. Plain Python over
sqlite3, no HTTP.

One connection per thread (WAL, so readers never block the writer). Writes run in `BEGIN IMMEDIATE` transactions
so that concurrent upserts of the same (typeName, qualifiedName) serialize; a partial UNIQUE index on active
entities is the last line of defence.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from olparser.jsontypes import JSON

_SCHEMA = """
CREATE TABLE IF NOT EXISTS typedefs (
    name TEXT PRIMARY KEY,
    category TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS entities (
    guid TEXT PRIMARY KEY,
    type_name TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    name TEXT,
    status TEXT NOT NULL DEFAULT 'ACTIVE',
    attributes TEXT NOT NULL,
    extra TEXT NOT NULL DEFAULT '{}',
    create_time INTEGER NOT NULL,
    update_time INTEGER NOT NULL,
    created_by TEXT NOT NULL,
    updated_by TEXT NOT NULL,
    modifications INTEGER NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX IF NOT EXISTS entities_active_unique ON entities (type_name, qualified_name)
    WHERE status = 'ACTIVE';
CREATE INDEX IF NOT EXISTS entities_qualified_name ON entities (qualified_name COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS entities_name ON entities (name COLLATE NOCASE);
CREATE TABLE IF NOT EXISTS relationships (
    guid TEXT PRIMARY KEY,
    type_name TEXT NOT NULL,
    end1_guid TEXT NOT NULL,
    end2_guid TEXT NOT NULL,
    position INTEGER NOT NULL DEFAULT 0,
    create_time INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS relationships_end2 ON relationships (end2_guid, type_name);
CREATE TABLE IF NOT EXISTS propagated_classifications (
    entity_guid TEXT NOT NULL,
    source_guid TEXT NOT NULL,
    type_name TEXT NOT NULL,
    PRIMARY KEY (entity_guid, source_guid, type_name)
);
CREATE INDEX IF NOT EXISTS propagated_classifications_source ON propagated_classifications (source_guid, type_name);
CREATE TABLE IF NOT EXISTS account_settings (
    name TEXT PRIMARY KEY,
    body TEXT NOT NULL
);
"""
# Columns added after the first release, as (table, column, declaration): added to older databases on open.
_ADDED_COLUMNS = (
    ("relationships", "status", "TEXT NOT NULL DEFAULT 'ACTIVE'"),
    ("relationships", "attributes", "TEXT NOT NULL DEFAULT '{}'"),
    ("relationships", "created_by", "TEXT NOT NULL DEFAULT ''"),
    ("relationships", "updated_by", "TEXT NOT NULL DEFAULT ''"),
    ("relationships", "update_time", "INTEGER NOT NULL DEFAULT 0"),
    ("relationships", "version", "INTEGER NOT NULL DEFAULT 0"),
)
# A relationship deleted through the REST API stays, DELETED, as in Atlas; only active ones must be unique.
_AFTER_COLUMNS = """
DROP INDEX IF EXISTS relationships_end1;
CREATE UNIQUE INDEX IF NOT EXISTS relationships_active_end1 ON relationships (end1_guid, type_name, end2_guid)
    WHERE status = 'ACTIVE';
"""
_RELATIONSHIP_COLUMNS = "guid, type_name, end1_guid, end2_guid, position"
_RELATIONSHIP_DETAIL_COLUMNS = (
    f"{_RELATIONSHIP_COLUMNS}, status, attributes, create_time, update_time, created_by, updated_by, version"
)

_ENTITY_COLUMNS = (
    "guid, type_name, qualified_name, name, status, attributes, extra, create_time, update_time, "
    "created_by, updated_by, modifications"
)
_MAX_PARAMS = 500


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class EntityRow:
    guid: str
    type_name: str
    qualified_name: str
    status: str
    attributes: JSON  # primitive attributes only; references live in `relationships`
    extra: JSON = field(default_factory=dict)  # other top-level fields kept as sent (contacts, labels...)
    create_time: int = 0
    update_time: int = 0
    created_by: str = ""
    updated_by: str = ""
    modifications: int = 1

    @property
    def name(self) -> str | None:
        value = self.attributes.get("name")
        return value if isinstance(value, str) else None

    def touched(self, user: str, when: int) -> "EntityRow":
        return replace(self, update_time=when, updated_by=user, modifications=self.modifications + 1)


@dataclass(frozen=True)
class RelationshipRow:
    guid: str
    type_name: str
    end1_guid: str
    end2_guid: str
    position: int


@dataclass(frozen=True)
class RelationshipDetail:
    """A relationship as the relationship REST API answers it (status, attributes, system fields)."""

    row: RelationshipRow
    status: str
    attributes: JSON
    create_time: int
    update_time: int
    created_by: str
    updated_by: str
    version: int


def _relationship_detail(row: tuple[Any, ...]) -> RelationshipDetail:
    return RelationshipDetail(
        RelationshipRow(*row[:5]), row[5], json.loads(row[6]), row[7], row[8], row[9], row[10], row[11]
    )


def _entity(row: tuple[Any, ...]) -> EntityRow:
    return EntityRow(
        row[0], row[1], row[2], row[4], json.loads(row[5]), json.loads(row[6]), row[7], row[8], row[9], row[10], row[11]
    )


def _chunks(items: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), _MAX_PARAMS):
        yield items[start : start + _MAX_PARAMS]


class Session:
    """Queries and writes over one connection; used inside `CatalogStore.read()` / `CatalogStore.write()`."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    # --- typedefs --------------------------------------------------------------------------------------------
    def typedefs(self) -> list[JSON]:
        return [json.loads(body) for (body,) in self.conn.execute("SELECT body FROM typedefs ORDER BY rowid")]

    def save_typedef(self, d: JSON) -> None:
        self.conn.execute(
            "INSERT INTO typedefs (name, category, body) VALUES (?, ?, ?) ON CONFLICT (name) DO "
            "UPDATE SET category = excluded.category, body = excluded.body",
            (d["name"], d["category"], json.dumps(d)),
        )

    def delete_typedef(self, name: str) -> None:
        self.conn.execute("DELETE FROM typedefs WHERE name = ?", (name,))

    # --- account settings (Purview's account API: the resource-set rule configuration) -----------------------------
    def account_setting(self, name: str) -> JSON | None:
        row = self.conn.execute("SELECT body FROM account_settings WHERE name = ?", (name,)).fetchone()
        return json.loads(row[0]) if row else None

    def save_account_setting(self, name: str, body: JSON) -> None:
        self.conn.execute(
            "INSERT INTO account_settings (name, body) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET "
            "body = excluded.body",
            (name, json.dumps(body)),
        )

    def delete_account_setting(self, name: str) -> None:
        self.conn.execute("DELETE FROM account_settings WHERE name = ?", (name,))

    def count_entities_in_collection(self, collection: str) -> int:
        return self.conn.execute(
            "SELECT COUNT(*) FROM entities WHERE status = 'ACTIVE' AND json_extract(extra, '$.collectionId') = ?",
            (collection,),
        ).fetchone()[0]

    def place_unplaced(self, root: str) -> None:
        """Entities stored before the catalog knew collections are in the root collection."""
        self.conn.execute(
            "UPDATE entities SET extra = json_set(extra, '$.collectionId', ?) WHERE "
            "json_extract(extra, '$.collectionId') IS NULL",
            (root,),
        )

    def count_entities_with_business_metadata(self, name: str) -> int:
        """Active entities carrying attributes of this business metadata (EntityRow.extra `businessAttributes`)."""
        return self.conn.execute(
            "SELECT COUNT(*) FROM entities WHERE status = 'ACTIVE' AND json_extract(extra, ?) IS NOT NULL",
            (f'$.businessAttributes."{name}"',),
        ).fetchone()[0]

    def count_entities_of_type(self, type_name: str) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM entities WHERE type_name = ?", (type_name,)).fetchone()[0]

    # --- entities --------------------------------------------------------------------------------------------
    def entity(self, guid: str) -> EntityRow | None:
        row = self.conn.execute(f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE guid = ?", (guid,)).fetchone()
        return _entity(row) if row else None

    def entities(self, guids: Iterable[str]) -> dict[str, EntityRow]:
        found: dict[str, EntityRow] = {}
        for chunk in _chunks(list(guids)):
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE guid IN ({marks})", chunk):
                found[row[0]] = _entity(row)
        return found

    def active_entity(self, type_names: Sequence[str], qualified_name: str) -> EntityRow | None:
        """The active entity with this qualifiedName under the first of `type_names` that has one."""
        for type_name in type_names:
            row = self.conn.execute(
                f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE type_name = ? AND qualified_name = ? "
                "AND status = 'ACTIVE'",
                (type_name, qualified_name),
            ).fetchone()
            if row:
                return _entity(row)
        return None

    def insert_entity(self, e: EntityRow) -> None:
        self.conn.execute(
            f"INSERT INTO entities ({_ENTITY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                e.guid,
                e.type_name,
                e.qualified_name,
                e.name,
                e.status,
                json.dumps(e.attributes),
                json.dumps(e.extra),
                e.create_time,
                e.update_time,
                e.created_by,
                e.updated_by,
                e.modifications,
            ),
        )

    def update_entity(self, e: EntityRow) -> None:
        self.conn.execute(
            "UPDATE entities SET type_name = ?, qualified_name = ?, name = ?, status = ?, attributes = ?, extra = ?, "
            "update_time = ?, updated_by = ?, modifications = ? WHERE guid = ?",
            (
                e.type_name,
                e.qualified_name,
                e.name,
                e.status,
                json.dumps(e.attributes),
                json.dumps(e.extra),
                e.update_time,
                e.updated_by,
                e.modifications,
                e.guid,
            ),
        )

    def search(
        self, type_names: Sequence[str] | None, text: str | None, include_deleted: bool = False
    ) -> list[EntityRow]:
        """Entities of the given types whose name or qualifiedName contains `text` (case-insensitive)."""
        clauses: list[str] = []
        params: list[Any] = []
        if not include_deleted:
            clauses.append("status = 'ACTIVE'")
        if type_names is not None:
            clauses.append(f"type_name IN ({','.join('?' * len(type_names))})")
            params.extend(type_names)
        if text:
            pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            clauses.append("(name LIKE ? ESCAPE '\\' OR qualified_name LIKE ? ESCAPE '\\')")
            params.extend([pattern, pattern])
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self.conn.execute(
            f"SELECT {_ENTITY_COLUMNS} FROM entities {where} ORDER BY name COLLATE NOCASE, qualified_name", params
        )
        return [_entity(row) for row in rows]

    # --- classifications propagated (classifications.py): which entity carries which source's classification ------
    def propagations_to(self, guids: Iterable[str]) -> list[tuple[str, str, str]]:
        """(entity, source, classification) for every classification propagated to one of `guids`."""
        found: list[tuple[str, str, str]] = []
        for chunk in _chunks(list(guids)):
            marks = ",".join("?" * len(chunk))
            found += self.conn.execute(
                "SELECT entity_guid, source_guid, type_name FROM propagated_classifications "
                f"WHERE entity_guid IN ({marks}) ORDER BY rowid",
                chunk,
            ).fetchall()
        return found

    def propagated_entities(self, source: str, type_name: str) -> set[str]:
        rows = self.conn.execute(
            "SELECT entity_guid FROM propagated_classifications WHERE source_guid = ? AND type_name = ?",
            (source, type_name),
        )
        return {guid for (guid,) in rows}

    def add_propagations(self, source: str, type_name: str, entities: Iterable[str]) -> None:
        self.conn.executemany(
            "INSERT OR IGNORE INTO propagated_classifications (entity_guid, source_guid, type_name) VALUES (?, ?, ?)",
            [(guid, source, type_name) for guid in entities],
        )

    def delete_propagations(self, source: str, type_name: str, entities: Iterable[str] | None = None) -> None:
        """Remove a source's classification from `entities` (None: from every entity it was propagated to)."""
        if entities is None:
            self.conn.execute(
                "DELETE FROM propagated_classifications WHERE source_guid = ? AND type_name = ?", (source, type_name)
            )
            return
        self.conn.executemany(
            "DELETE FROM propagated_classifications WHERE entity_guid = ? AND source_guid = ? AND type_name = ?",
            [(guid, source, type_name) for guid in entities],
        )

    # --- relationships ---------------------------------------------------------------------------------------
    def relationships_of(self, guid: str) -> list[RelationshipRow]:
        """The active relationships with `guid` at either end."""
        rows = self.conn.execute(
            f"SELECT {_RELATIONSHIP_COLUMNS} FROM relationships WHERE end1_guid = ? AND status = 'ACTIVE' "
            f"UNION ALL SELECT {_RELATIONSHIP_COLUMNS} FROM relationships WHERE end2_guid = ? AND status = 'ACTIVE' "
            "ORDER BY position",
            (guid, guid),
        )
        return [RelationshipRow(*row) for row in rows]

    def relationships_at(self, end: int, type_name: str, guids: Sequence[str]) -> list[RelationshipRow]:
        """Relationships of `type_name` whose end `end` (1 or 2) is one of `guids`."""
        column = "end1_guid" if end == 1 else "end2_guid"
        found: list[RelationshipRow] = []
        for chunk in _chunks(list(guids)):
            marks = ",".join("?" * len(chunk))
            found += [
                RelationshipRow(*row)
                for row in self.conn.execute(
                    f"SELECT {_RELATIONSHIP_COLUMNS} FROM relationships "
                    f"WHERE {column} IN ({marks}) AND type_name = ? AND status = 'ACTIVE' ORDER BY position",
                    (*chunk, type_name),
                )
            ]
        return found

    def relationships_between(self, type_name: str, end1_guid: str, end2_guid: str) -> list[RelationshipRow]:
        rows = self.conn.execute(
            f"SELECT {_RELATIONSHIP_COLUMNS} FROM relationships WHERE end1_guid = ? AND type_name = ? "
            "AND end2_guid = ? AND status = 'ACTIVE'",
            (end1_guid, type_name, end2_guid),
        )
        return [RelationshipRow(*row) for row in rows]

    def relationship(self, guid: str) -> RelationshipDetail | None:
        """One relationship by guid, active or deleted."""
        row = self.conn.execute(
            f"SELECT {_RELATIONSHIP_DETAIL_COLUMNS} FROM relationships WHERE guid = ?", (guid,)
        ).fetchone()
        return _relationship_detail(row) if row else None

    def insert_relationship(
        self, r: RelationshipRow, when: int, user: str = "", attributes: JSON | None = None
    ) -> None:
        self.conn.execute(
            "INSERT INTO relationships (guid, type_name, end1_guid, end2_guid, position, create_time, update_time, "
            "created_by, updated_by, attributes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                r.guid,
                r.type_name,
                r.end1_guid,
                r.end2_guid,
                r.position,
                when,
                when,
                user,
                user,
                json.dumps(attributes or {}),
            ),
        )

    def update_relationship(self, guid: str, status: str, attributes: JSON, user: str, when: int) -> None:
        self.conn.execute(
            "UPDATE relationships SET status = ?, attributes = ?, updated_by = ?, update_time = ?, "
            "version = version + 1 WHERE guid = ?",
            (status, json.dumps(attributes), user, when, guid),
        )

    def set_relationship_position(self, guid: str, position: int) -> None:
        self.conn.execute("UPDATE relationships SET position = ? WHERE guid = ?", (position, guid))

    def delete_relationships(self, guids: Iterable[str]) -> None:
        self.conn.executemany("DELETE FROM relationships WHERE guid = ?", [(g,) for g in guids])


def _create_owner_only(path: Path) -> None:
    """Create the database file (and a missing folder) readable by its owner only; SQLite gives its -wal and -shm
    files the database file's permissions."""
    if not path.parent.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))


class CatalogStore:
    """The catalog's SQLite database file."""

    def __init__(self, path: str | Path, busy_timeout_seconds: float = 30.0) -> None:
        self.path = Path(path)
        _create_owner_only(self.path)
        self._busy_timeout = busy_timeout_seconds
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        conn = self._connection()
        conn.executescript(_SCHEMA)
        for table, column, declaration in _ADDED_COLUMNS:
            present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
            if column not in present:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
        conn.executescript(_AFTER_COLUMNS)

    def _connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout * 1000)}")
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only snapshot."""
        conn = self._connection()
        conn.execute("BEGIN")
        try:
            yield Session(conn)
        finally:
            conn.execute("COMMIT")

    @contextmanager
    def write(self) -> Iterator[Session]:
        """One write transaction (BEGIN IMMEDIATE, waiting while another writer holds the lock); rolled back on error."""
        conn = self._connection()
        deadline = time.monotonic() + self._busy_timeout
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        try:
            yield Session(conn)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()
