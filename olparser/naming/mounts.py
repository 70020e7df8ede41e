"""Databricks paths: canonical DBFS form and `/mnt` mount-point resolution, applied before the mapping rules run.

Spark reports a mounted path as namespace `dbfs` and name `/mnt/<mount>/<rest>`. The mount list comes from the
`environment-properties` run facet (`mountPoints: [{mountPoint, source}]`). The longest mount point that is the name
itself or a parent folder of it wins (the first one listed when a mount point is listed twice); trailing slashes in
mount definitions are ignored. Mounts are indexed by path segment once per list (a MountIndex, a trie), so a lookup
costs the length of the name, not the number of mounts: 15,000 names against 15,000 mounts stay linear. The result
is the mount's storage: namespace `scheme://authority` of its source and name `/<source path>/<rest>`, exactly as
Spark names a dataset it reads from that storage directly; so one set of rules covers both.

Canonical DBFS form (before resolution): namespace `dbfs` or `file`, with names `dbfs:/x`, `mnt/x` (no leading slash,
OpenLineage 1.17+) and `file` names `/dbfs/x` (the FUSE mount) all become namespace `dbfs`, name `/x`.
The DBFS root mount `/` is never applied: paths outside `/mnt` keep namespace `dbfs` (e.g. Hive managed tables).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import orjson

DBFS_NAMESPACES = frozenset(("dbfs", "file"))


@dataclass(frozen=True)
class MountPoint:
    mount_point: str
    source: str


def _field(item: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = item.get(name)
        if isinstance(value, str):
            return value
    return None


def mounts_from_facet(value: Any) -> tuple[MountPoint, ...]:
    """Mount points from an `environment-properties` facet, its inner dict, or the `mountPoints` list itself.

    Entries may use `mountPoint`/`source` or `MountPoint`/`Source`; entries missing either are skipped. Read each
    time: an engine remembers the lists its runs send (`MountMemo.read`).
    """
    listed = _mount_list(value)
    return () if listed is None else _read_mounts(listed)


def _mount_list(value: Any) -> list[Any] | None:
    if isinstance(value, dict):
        inner = value.get("environment-properties")
        value = inner.get("mountPoints") if isinstance(inner, dict) else value.get("mountPoints")
    return value if isinstance(value, list) else None


def _read_mounts(value: list[Any]) -> tuple[MountPoint, ...]:
    mounts = []
    for item in value:
        if isinstance(item, MountPoint):
            mounts.append(item)
        elif isinstance(item, dict):
            point, source = _field(item, "mountPoint", "MountPoint"), _field(item, "source", "Source")
            if point is not None and source is not None:
                mounts.append(MountPoint(point, source))
    return tuple(mounts)


READ_LISTS_SIZE = 64
INDEX_CACHE_SIZE = 16


class MountMemo:
    """The mount lists an engine's runs sent and their indexes (`MappingEngine.mount_memo`: they go with the engine).
    The runs of a cluster send the same list, which is read once (`read`, by orjson's text of the list as sent) and
    is then the same tuple, whose index `index` keeps. Equal texts give equal mounts (only text values are read;
    orjson writes text exactly). Bounded: each is emptied when full."""

    def __init__(self) -> None:
        self._read: dict[bytes, tuple[MountPoint, ...]] = {}
        self._indexes: dict[int, tuple[Sequence[MountPoint], MountIndex]] = {}

    def read(self, value: Any) -> tuple[MountPoint, ...]:
        """`mounts_from_facet(value)`, the same tuple for a list sent again."""
        listed = _mount_list(value)
        if listed is None:
            return ()
        try:  # a MountPoint (a dataclass) is refused: such lists are read every time
            key = orjson.dumps(listed, option=orjson.OPT_PASSTHROUGH_DATACLASS)
        except orjson.JSONEncodeError:
            return _read_mounts(listed)
        known = self._read.get(key)
        if known is not None:
            return known
        found = _read_mounts(listed)
        if len(self._read) >= READ_LISTS_SIZE:
            self._read.clear()
        self._read[key] = found
        return found

    def index(self, mounts: Sequence[MountPoint] | MountIndex) -> MountIndex:
        """`mount_index(mounts)`; a tuple is indexed once and remembered by identity (the caller keeps passing the
        same run's tuple, so each lookup is O(name) and never O(mounts))."""
        if isinstance(mounts, MountIndex) or mounts.__class__ is not tuple:
            return mount_index(mounts)
        cached = self._indexes.get(id(mounts))
        if cached is not None and cached[0] is mounts:
            return cached[1]
        index = mount_index(mounts)
        if len(self._indexes) >= INDEX_CACHE_SIZE:
            self._indexes.clear()
        self._indexes[id(mounts)] = (mounts, index)  # holding the tuple keeps its id from being reused while cached
        return index


class MountIndex:
    """Mount points by path segment: `find` walks the name's segments once and keeps the deepest mount on the way."""

    __slots__ = ("_root", "size")

    def __init__(self, mounts: Sequence[MountPoint]):
        self._root: list[Any] = [None, {}]  # a node: [(mount point, MountPoint) or None, {segment: node}]
        self.size = 0
        for mount in mounts:
            point = mount.mount_point.strip().rstrip("/")
            if not point:
                continue  # the DBFS root "/" is never applied
            node = self._root
            for segment in point.split("/"):
                node = node[1].setdefault(segment, [None, {}])
            if node[0] is None:
                node[0] = (point, mount)
                self.size += 1

    def __len__(self) -> int:
        return self.size

    def find(self, path: str) -> tuple[str, MountPoint] | None:
        """(mount point without trailing slash, mount) of the longest mount that is `path` or a parent folder of it."""
        node, best = self._root, None
        for segment in path.split("/"):
            node = node[1].get(segment)
            if node is None:
                break
            if node[0] is not None:
                best = node[0]
        return best


def mount_index(mounts: Sequence[MountPoint] | MountIndex) -> MountIndex:
    """The index of a mount list (built on each call: `MountMemo.index` keeps a run's)."""
    if isinstance(mounts, MountIndex):
        return mounts
    return MountIndex(_as_mount_points(mounts))


def _as_mount_points(mounts: Sequence[Any]) -> Sequence[MountPoint]:
    if all(m.__class__ is MountPoint for m in mounts):
        return mounts
    return mounts_from_facet(list(mounts))


def split_source(source: str) -> tuple[str, str]:
    """`abfss://c@a.dfs.core.windows.net/sub/` → (`abfss://c@a.dfs.core.windows.net`, `sub`)."""
    scheme = source.find("://")
    if scheme < 0:
        return source.rstrip("/"), ""
    slash = source.find("/", scheme + 3)
    if slash < 0:
        return source, ""
    return source[:slash], source[slash:].strip("/")


_SPARK_SCHEMES = {"abfs": "abfss", "wasb": "wasbs"}  # openlineage-spark 1.51+ names these by their TLS form


def location_dataset(location: str) -> tuple[str, str]:
    """The (namespace, name) openlineage-spark 1.51+ gives a dataset at a storage location: `scheme://authority` and
    the path without its leading slash (`abfs` and `wasb` as `abfss` and `wasbs`); DBFS, `/Volumes`, `file:` and bare
    paths in the canonical DBFS form (`dbfs`, `/path`)."""
    location = location.strip()
    if location[:5].lower() == "file:":
        return canonical_dbfs("file", "/" + location[5:].lstrip("/"))
    scheme, separator, _ = location.partition("://")
    if separator and scheme and "/" not in scheme:
        scheme = scheme.lower()
        return split_source(_SPARK_SCHEMES.get(scheme, scheme) + location[len(scheme) :])
    return canonical_dbfs("dbfs", location)


def canonical_dbfs(namespace: str, name: str) -> tuple[str, str]:
    """The canonical (namespace, name) of a DBFS path (see the module doc); other inputs are returned unchanged."""
    if namespace == "file" and name.startswith("/dbfs/"):
        return "dbfs", name[5:]
    if namespace != "dbfs":
        return namespace, name
    if name.startswith("dbfs:"):
        name = name[5:]
    if not name.startswith("/"):
        name = "/" + name
    return "dbfs", name


def resolve_mount(name: str, mounts: Sequence[MountPoint] | MountIndex) -> tuple[str, str, MountPoint] | None:
    """(namespace, name, mount) for a `/mnt` path under one of the mounts (MountPoints, facet dicts or a MountIndex),
    else None."""
    if not name.startswith("/mnt/") or not mounts:
        return None
    path = name.rstrip("/")
    found = mount_index(mounts).find(path)
    if found is None:
        return None
    point, mount = found
    namespace, base = split_source(mount.source.strip())
    rest = path[len(point) :].strip("/")
    return namespace, "/" + "/".join(p for p in (base, rest) if p), mount
