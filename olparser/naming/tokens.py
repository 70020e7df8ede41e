"""Tokens of an OpenLineage (namespace, name) pair, and compiled readers for token references like `nameGroups[0].parts[1]`.

Tokenising is compatible with the reference connector:
  namespace  `prefix` = text before the first `//` minus the one character before it (all of it when there is no `//`);
             the rest splits on `@ : / ; , ?` (empty pieces dropped); a piece `k=v` goes to `nameSpcNameVals`
             (`databaseName` / `database` in any case is also stored as `database`), every other piece to
             `nameSpcBodyParts`; `nameSpcConParts` flattens the dotted body pieces split on `.`.
  name       a SQL-style name made of `[...]` parts gives one `nameGroups` entry per part (see sql_name_groups);
             any other name, storage paths with brackets such as `raw/sales[2024]/part` included, is one group, the
             whole name; `/` is trimmed from both ends of each group; `nameGroups[i].parts` splits a group on `.`
             and `/`. Tokenising is one left-to-right scan: linear in the length of the name.
A reference reads one value, or None when the index or key does not exist: the rule engine never raises on data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Union

Value = Union[str, int, None]
Reader = Callable[["NamespaceTokens", "NameTokens", "str | None"], Value]

_BODY_SPLIT = re.compile(r"[@:/;,?]+")
_PARTS_SPLIT = re.compile(r"[./]+")
_DATABASE_KEYS = frozenset(("database", "databasename"))


@dataclass(frozen=True, slots=True)
class NamespaceTokens:
    prefix: str
    body: tuple[str, ...]
    con: tuple[str, ...]
    vals: dict[str, str]


@dataclass(frozen=True, slots=True)
class NameTokens:
    groups: tuple[str, ...]
    parts: tuple[tuple[str, ...], ...]


@lru_cache(maxsize=4096)
def tokenize_namespace(namespace: str) -> NamespaceTokens:
    """Split a namespace into prefix, body parts, dotted parts and key=value pairs (cached: few namespaces recur)."""
    cut = namespace.find("//")
    if cut < 0:
        return NamespaceTokens(namespace, (), (), {})
    prefix = namespace[: max(cut - 1, 0)]
    body: list[str] = []
    vals: dict[str, str] = {}
    for piece in _BODY_SPLIT.split(namespace[cut + 2 :]):
        if not piece:
            continue
        kv = piece.split("=")
        if len(kv) == 2:
            key, value = kv
            vals[key] = value
            if key.lower() in _DATABASE_KEYS:
                vals.setdefault("database", value)
        else:
            body.append(piece)
    con = tuple(p for piece in body if "." in piece for p in piece.split(".") if p)
    return NamespaceTokens(prefix, tuple(body), con, vals)


@lru_cache(maxsize=8192)
def tokenize_name(name: str) -> NameTokens:
    """Split a dataset name into its groups (SQL-style `[...]` parts, else the whole name) and their dot/slash parts."""
    trimmed = name.strip("/")
    groups = sql_name_groups(trimmed) if "[" in trimmed else None
    if groups is None:
        groups = (trimmed,)
    return NameTokens(groups, tuple(tuple(p for p in _PARTS_SPLIT.split(g) if p) for g in groups))


def sql_name_groups(name: str) -> tuple[str, ...] | None:
    """The parts of a SQL-style multipart name with at least one bracketed part, else None.

    Such a name is a sequence of parts separated by `.`, or written next to each other when both are bracketed
    (`[a][b]`, the reference's documented form); each part is either a whole `[...]` group (its content taken as is,
    dots included) or a plain identifier without `[`, `]` or `/`: `[dbo].[orders]`, `[sales].orders`,
    `db.[my.schema].[t]`, `[myname.test][for.you]`. Anything else is not SQL and stays one group (None): storage paths
    such as `raw/sales[2024]/part`, `data[1].csv`, an unclosed `[`, an empty part. One scan, linear in the length.
    """
    groups: list[str] = []
    bracketed = False
    i, end = 0, len(name)
    while True:
        if name.startswith("[", i):
            close = name.find("]", i + 1)
            if close < 0:
                return None
            groups.append(name[i + 1 : close].strip("/"))
            bracketed = True
            i = close + 1
            if i == end:
                break
            if name[i] == "[":
                continue
            if name[i] != ".":
                return None
            i += 1
            continue
        dot = name.find(".", i)
        stop = end if dot < 0 else dot
        part = name[i:stop]
        if not part or "[" in part or "]" in part or "/" in part:
            return None
        groups.append(part)
        if dot < 0:
            break
        i = dot + 1
    return tuple(groups) if bracketed else None


# --- token references ---------------------------------------------------------------------------------------------

TOKEN_NAMES = (
    "prefix",
    "nameSpcBodyParts",
    "nameSpcConParts",
    "nameSpcNameVals",
    "nameGroups",
    "nameSpaceBodyJoinedBySlashFrom",
    "AdbWorkspaceUrl",
)

_REF = re.compile(
    r"""^(?P<name>[A-Za-z]+)
        (?:\[\s*(?:(?P<idx>-?\d+)|'(?P<skey>[^']*)'|"(?P<dkey>[^"]*)")\s*\])?
        (?P<parts>\.parts(?:\[\s*(?P<pidx>-?\d+)\s*\])?)?$""",
    re.VERBOSE,
)


class TokenError(ValueError):
    """A token reference that does not parse or names no token."""


@dataclass(frozen=True)
class TokenRef:
    """A parsed token reference. `is_count`: it reads a list as its length. `scope`: what its value depends on,
    "namespace", "name" or "call" (the workspace url), so that namespace-only work can be done once per namespace."""

    text: str
    read: Reader
    is_count: bool
    scope: str


def _at(seq: tuple[Value, ...], i: int) -> Value:
    try:
        return seq[i]
    except IndexError:
        return None


def parse_token(text: str) -> TokenRef:
    """Compile a reference such as `nameSpcNameVals['database']` into a reader; raises TokenError."""
    text = text.strip()
    m = _REF.match(text)
    if m is None:
        raise TokenError(
            f"'{text}' is not a token reference (expected NAME, NAME[i], NAME['key'] or nameGroups[i].parts[j])"
        )
    name, idx, parts, pidx = m["name"], m["idx"], m["parts"], m["pidx"]
    key = m["skey"] if m["skey"] is not None else m["dkey"]
    if name not in TOKEN_NAMES:
        raise TokenError(f"unknown token '{name}' (known: {', '.join(TOKEN_NAMES)})")
    if parts and name != "nameGroups":
        raise TokenError(f"'{text}': only nameGroups[i] has .parts")
    if key is not None and name != "nameSpcNameVals":
        raise TokenError(f"'{text}': only nameSpcNameVals takes a ['key']")
    i = int(idx) if idx is not None else None

    def ref(read: Reader, is_count: bool = False) -> TokenRef:
        scope = "name" if name == "nameGroups" else "call" if name == "AdbWorkspaceUrl" else "namespace"
        return TokenRef(text, read, is_count, scope)

    if name in ("prefix", "AdbWorkspaceUrl"):
        if idx is not None or key is not None:
            raise TokenError(f"'{text}': {name} takes no index")
        if name == "prefix":
            return ref(lambda ns, nm, ws: ns.prefix)
        return ref(lambda ns, nm, ws: ws)
    if name == "nameSpcNameVals":
        if idx is not None:
            raise TokenError(f"'{text}': nameSpcNameVals takes a ['key'], not a number")
        if key is None:
            return ref(lambda ns, nm, ws: len(ns.vals), True)
        return ref(lambda ns, nm, ws: ns.vals.get(key))
    if name == "nameSpaceBodyJoinedBySlashFrom":
        if i is None:
            raise TokenError(f"'{text}': nameSpaceBodyJoinedBySlashFrom needs an index, e.g. [2]")
        return ref(lambda ns, nm, ws: "/".join(ns.body[i:]) if -len(ns.body) <= i < len(ns.body) else None)
    if name == "nameSpcBodyParts":
        if i is None:
            return ref(lambda ns, nm, ws: len(ns.body), True)
        return ref(lambda ns, nm, ws: _at(ns.body, i))
    if name == "nameSpcConParts":
        if i is None:
            return ref(lambda ns, nm, ws: len(ns.con), True)
        return ref(lambda ns, nm, ws: _at(ns.con, i))
    # nameGroups
    if i is None:
        if parts:
            raise TokenError(f"'{text}': .parts needs a group index, e.g. nameGroups[0].parts")
        return ref(lambda ns, nm, ws: len(nm.groups), True)
    if not parts:

        def read_group(ns: NamespaceTokens, nm: NameTokens, ws: str | None) -> Value:
            try:
                return nm.groups[i]
            except IndexError:
                return None

        return ref(read_group)
    if pidx is None:
        return ref(lambda ns, nm, ws: len(nm.parts[i]) if -len(nm.parts) <= i < len(nm.parts) else None, True)
    j = int(pidx)

    def read_part(ns: NamespaceTokens, nm: NameTokens, ws: str | None) -> Value:
        try:
            return nm.parts[i][j]
        except IndexError:
            return None

    return ref(read_part)


def token_table(ns: NamespaceTokens, nm: NameTokens, workspace_url: str | None) -> dict[str, object]:
    """Every token of one input, for `explain` output."""
    table: dict[str, object] = {
        "prefix": ns.prefix,
        "nameSpcBodyParts": list(ns.body),
        "nameSpcConParts": list(ns.con),
        "nameSpcNameVals": dict(ns.vals),
    }
    for i in range(len(ns.body)):
        table[f"nameSpaceBodyJoinedBySlashFrom[{i}]"] = "/".join(ns.body[i:])
    table["nameGroups"] = list(nm.groups)
    for i, parts in enumerate(nm.parts):
        table[f"nameGroups[{i}].parts"] = list(parts)
    table["AdbWorkspaceUrl"] = workspace_url
    return table
