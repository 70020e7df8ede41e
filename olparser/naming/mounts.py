"""Databricks paths: canonical DBFS form and `/mnt` mount-point resolution, applied before the mapping rules run.

Spark reports a mounted path as namespace `dbfs` and name `/mnt/<mount>/<rest>`. The mount list comes from the
`environment-properties` run facet (`mountPoints: [{mountPoint, source}]`). The longest mount point that is the name
itself or a parent folder of it wins; trailing slashes in mount definitions are ignored. The result is the mount's
storage: namespace `scheme://authority` of its source and name `/<source path>/<rest>`, exactly as Spark names a
dataset it reads from that storage directly; so one set of rules covers both.

Canonical DBFS form (before resolution): namespace `dbfs` or `file`, with names `dbfs:/x`, `mnt/x` (no leading slash,
OpenLineage 1.17+) and `file` names `/dbfs/x` (the FUSE mount) all become namespace `dbfs`, name `/x`.
The DBFS root mount `/` is never applied: paths outside `/mnt` keep namespace `dbfs` (e.g. Hive managed tables).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

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

    Entries may use `mountPoint`/`source` or `MountPoint`/`Source`; entries missing either are skipped.
    """
    if isinstance(value, dict):
        inner = value.get("environment-properties")
        value = inner.get("mountPoints") if isinstance(inner, dict) else value.get("mountPoints")
    if not isinstance(value, list):
        return ()
    mounts = []
    for item in value:
        if isinstance(item, MountPoint):
            mounts.append(item)
        elif isinstance(item, dict):
            point, source = _field(item, "mountPoint", "MountPoint"), _field(item, "source", "Source")
            if point is not None and source is not None:
                mounts.append(MountPoint(point, source))
    return tuple(mounts)


@lru_cache(maxsize=64)
def _by_length(mounts: tuple[MountPoint, ...]) -> tuple[tuple[str, MountPoint], ...]:
    keyed = ((m.mount_point.strip().rstrip("/"), m) for m in mounts)
    return tuple(sorted(((k, m) for k, m in keyed if k), key=lambda km: len(km[0]), reverse=True))


def _split_source(source: str) -> tuple[str, str]:
    """`abfss://c@a.dfs.core.windows.net/sub/` → (`abfss://c@a.dfs.core.windows.net`, `sub`)."""
    scheme = source.find("://")
    if scheme < 0:
        return source.rstrip("/"), ""
    slash = source.find("/", scheme + 3)
    if slash < 0:
        return source, ""
    return source[:slash], source[slash:].strip("/")


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


def resolve_mount(name: str, mounts: Sequence[MountPoint]) -> tuple[str, str, MountPoint] | None:
    """(namespace, name, mount) for a `/mnt` path under one of the mounts (MountPoints or facet dicts), else None."""
    if not name.startswith("/mnt/") or not mounts:
        return None
    if not all(m.__class__ is MountPoint for m in mounts):
        mounts = mounts_from_facet(list(mounts))
    path = name.rstrip("/")
    for point, mount in _by_length(tuple(mounts)):
        if path == point or path.startswith(point + "/"):
            namespace, base = _split_source(mount.source.strip())
            rest = path[len(point) :].strip("/")
            return namespace, "/" + "/".join(p for p in (base, rest) if p), mount
    return None

