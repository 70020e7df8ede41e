"""Resolution's plain data: a dataset as the builder names it (`NamedDataset`, its `Identity`s), and its candidates
(`Candidate`, exact or a `Search` whose hits must have a qualifiedName `Shape`), with their JSON form (the re-link
registry keeps candidates as JSON). No I/O, no rules: `candidates.py` derives candidates, the catalog resolver checks
them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Sequence

from .tasks import TaskMatch

Key = tuple[str, str]  # (typeName, qualifiedName)

UNITY_STORAGE_SEGMENT = "__unitystorage"  # a Unity Catalog managed table's storage folder: opaque ids
SEARCH_LIMIT = 100  # hits read per search: more than enough for one name of one type

# Shape parts: literal text, one path segment, or one or more Hive partition segments (`/k={...}`); or a dataset's
# part (`PART` in its case, `IPART` in any case) found after any text, as a whole word: not inside a longer name
# (a store whose qualifiedName layout no source confirms: olparser/resolution/store_search.py); a `HOST`, first:
# a host name (any case) at the start or right after the scheme's `//`; a `KEY`, a path that starts right after
# the first `/` that follows (an object key after its bucket's name: no folder between).
TEXT, SEGMENT, PARTITIONS, PART, IPART, HOST, KEY = "text", "segment", "partitions", "part", "ipart", "host", "key"
SHAPE_KINDS = (TEXT, SEGMENT, PARTITIONS, PART, IPART, HOST, KEY)
Shape = tuple[tuple[str, str], ...]
_PATTERNS = {SEGMENT: r"[^/]+", PARTITIONS: r"(?:/[^/=]+=\{[^/{}]+\})+"}
_WORD = r"A-Za-z0-9_$\-"  # what continues a name: a part must not touch these on either side


@dataclass(frozen=True)
class Identity:
    """One way our rules name a dataset: the OpenLineage (namespace, name) and the (type, qualifiedName) it maps to.
    `scanned_type`: a rule (or the Unity Catalog scan's naming) gave a type the scanners register; False for the
    connector's own types (placeholders)."""

    type_name: str
    qualified_name: str
    namespace: str
    name: str
    scanned_type: bool
    unity: "UnityTable | None" = None  # set when this identity is a Unity Catalog table

    @property
    def key(self) -> Key:
        return self.type_name, self.qualified_name


@dataclass(frozen=True)
class UnityTable:
    """A Unity Catalog table name; `catalog` is None when the producer did not say (older openlineage-spark)."""

    catalog: str | None
    schema: str
    table: str
    # The host the namespace names (`unitycatalog://{host}[:port]`, dbt-databricks' `databricks://{workspace host}`),
    # None for openlineage-spark's `unity-catalog`; with a host, `metastore` is that host's metastore (None: unknown,
    # found by search), and the run's workspace metastore is not used.
    host: str | None = None
    metastore: str | None = None


@dataclass(frozen=True)
class NamedDataset:
    """What the builder knows of one dataset, for resolution: the identity it was written as, the identities our
    rules give it (preferred first), and the Unity Catalog metastore of the run's workspace when known."""

    default: Key
    identities: tuple[Identity, ...]
    metastore: str | None = None


@dataclass(frozen=True)
class Search:
    """A discovery query (`keywords`, one entity type, attribute equalities) and the qualifiedName shape a hit must
    have to count. `type_name` "" with `asset_types`: any type of those sources (Purview's `assetType` filter, the
    spec's example Discovery_Query_AssetType), for a store whose scanned type no source confirms."""

    type_name: str
    keywords: str
    shape: Shape
    attributes: tuple[tuple[str, str], ...] = ()
    ignore_case: bool = False  # the shape matches in any case (Azure resource ids: olparser/lineage/adf.py)
    asset_types: tuple[str, ...] = ()

    def matches(self, type_name: str, qualified_name: str) -> bool:
        pattern = _compiled(self.shape, self.ignore_case)
        return (not self.type_name or type_name == self.type_name) and pattern.fullmatch(qualified_name) is not None

    def query(self, limit: int = SEARCH_LIMIT) -> dict[str, Any]:
        """The body of Purview's `POST search/query` (Data Map API 2023-09-01)."""
        clauses: list[dict[str, Any]] = [{"entityType": self.type_name}] if self.type_name else []
        if len(self.asset_types) == 1:
            clauses.append({"assetType": self.asset_types[0]})
        elif self.asset_types:
            clauses.append({"or": [{"assetType": name} for name in self.asset_types]})
        clauses += [
            {"attributeName": name, "operator": "eq", "attributeValue": value} for name, value in self.attributes
        ]
        return {
            "keywords": self.keywords,
            "limit": limit,
            "filter": clauses[0] if len(clauses) == 1 else {"and": clauses},
        }


@dataclass(frozen=True)
class Candidate:
    """An asset that may be the dataset: exact (`type_name`, `qualified_name`), or a search (`search`, with
    `qualified_name` showing its shape). `origin` says where it comes from (for `qn-tester --explain` and logs)."""

    type_name: str
    qualified_name: str
    origin: str
    search: Search | None = None

    @property
    def key(self) -> Key:
        return self.type_name, self.qualified_name

    @property
    def exact(self) -> bool:
        return self.search is None


def shape_text(shape: Shape) -> str:
    """A shape as people read it: `{*}` one segment, `[/k={k}]+` one or more partition segments, `…part` a part
    after any text."""
    return "".join(_shown(kind, value) for kind, value in shape)


def _shown(kind: str, value: str) -> str:
    if kind == HOST:
        return f"…//{value}"
    if kind in (PART, IPART):
        return f"…{value}"
    if kind == KEY:
        return f"…/{value}"
    return {SEGMENT: "{*}", PARTITIONS: "[/k={k}]+"}.get(kind, value)


def _pattern(kind: str, value: str) -> str:
    if kind == TEXT:
        return re.escape(value)
    if kind in (PART, IPART):
        name = f"(?i:{re.escape(value)})" if kind == IPART else re.escape(value)
        return f".*?(?<![{_WORD}]){name}(?![{_WORD}])"
    if kind == KEY:
        return f"[^/]*/{re.escape(value)}"
    if kind == HOST:
        return f"(?:[^/]*//)?(?i:{re.escape(value)})(?![{_WORD}])"
    return _PATTERNS[kind]


@lru_cache(maxsize=4096)
def _compiled(shape: Shape, ignore_case: bool = False) -> re.Pattern[str]:
    text = "".join(_pattern(kind, value) for kind, value in shape)
    return re.compile(text, re.IGNORECASE if ignore_case else 0)


def search_hits(search: Search, hits: Sequence[Key]) -> list[Key]:
    """The hits of the search's type whose qualifiedName has its shape, each once, in the order found."""
    return list(dict.fromkeys(hit for hit in hits if search.matches(*hit)))


def search_match(search: Search, hits: Sequence[Key]) -> Key | None:
    """The one hit of the search's type whose qualifiedName has its shape, or None (none, or ambiguous)."""
    matching = search_hits(search, hits)
    return matching[0] if len(matching) == 1 else None


# --- plain JSON, for the re-link registry ---------------------------------------------------------------------------


def candidates_to_json(candidates: Sequence[Candidate]) -> list[dict[str, Any]]:
    out = []
    for candidate in candidates:
        item: dict[str, Any] = {
            "typeName": candidate.type_name,
            "qualifiedName": candidate.qualified_name,
            "origin": candidate.origin,
        }
        if candidate.search is not None:
            item["search"] = {
                "keywords": candidate.search.keywords,
                "shape": [list(part) for part in candidate.search.shape],
                "attributes": [list(pair) for pair in candidate.search.attributes],
            }
            if candidate.search.asset_types:
                item["search"]["assetTypes"] = list(candidate.search.asset_types)
            if candidate.search.ignore_case:
                item["search"]["ignoreCase"] = True
        out.append(item)
    return out


def candidates_from_json(items: Any) -> tuple[Candidate, ...]:
    """The candidates `candidates_to_json` wrote; ValueError naming the problem for anything else."""
    if not isinstance(items, list):
        raise ValueError("candidates must be a list")
    found = []
    for item in items:
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("typeName"), str)
            or not isinstance(item.get("qualifiedName"), str)
        ):
            raise ValueError("a candidate needs typeName and qualifiedName")
        search = None
        if isinstance(item.get("search"), dict):
            spec = item["search"]
            shape = tuple((str(kind), str(value)) for kind, value in spec.get("shape") or ())
            if not shape or any(kind not in SHAPE_KINDS for kind, _ in shape):
                raise ValueError(f"a search candidate needs a shape of {', '.join(SHAPE_KINDS)} parts")
            search = Search(
                item["typeName"],
                str(spec.get("keywords") or ""),
                shape,
                tuple((str(a), str(b)) for a, b in spec.get("attributes") or ()),
                spec.get("ignoreCase") is True,
                tuple(str(a) for a in spec.get("assetTypes") or ()),
            )
        found.append(Candidate(item["typeName"], item["qualifiedName"], str(item.get("origin") or ""), search))
    return tuple(found)


@dataclass(frozen=True)
class Resolution:
    """`links`: dataset key -> the scanned asset it is (itself when the rule identity is the scanned asset);
    `interim`: datasets left on the identity the builder gave them although they have candidates (the connector
    creates or keeps them; the re-link timer looks again later), with their candidates; `taken_over`: entities the
    connector created that a scan has registered since; `calls`: catalog requests made; `tasks`: the job runs' tasks
    found among their jobs' existing tasks (olparser/resolution/tasks.py)."""

    links: dict[Key, Key] = field(default_factory=dict)
    interim: dict[Key, tuple[Candidate, ...]] = field(default_factory=dict)
    taken_over: frozenset[Key] = frozenset()
    calls: int = 0
    tasks: dict[str, TaskMatch] = field(default_factory=dict)  # a TaskLookup's task -> the job's task it is
