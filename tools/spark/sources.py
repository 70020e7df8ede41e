"""Where the events are: folders (read recursively), files, globs, local paths and URLs Spark can read (`abfss://`,
`dbfs:/`...), and the archive layout `{yyyy}/{mm}/{dd}/{hh}/`, of which only the days of the time range are read.

Names starting with `_` or `.` are skipped, as Spark and `ol2purview replay` skip them (`_SUCCESS`, `.crc`,
`_config.json`).
"""

from __future__ import annotations

import glob
import os
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterable

MAX_PRUNED_DAYS = 3660  # longer ranges read the whole archive (the eventTime filter still applies)
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_YEAR = re.compile(r"^\d{4}$")
_GLOB = re.compile(r"[*?\[{]")


def is_remote(source: str) -> bool:
    """A URL for Spark (abfss://, wasbs://, dbfs:/, file:/...) rather than a local path (a Windows drive is local)."""
    return bool(_URL.match(source)) and not re.match(r"^[A-Za-z]:[\\/]", source)


def is_hidden(name: str) -> bool:
    return name.startswith(("_", "."))


def is_archive_root(source: str, archive_container: str = "lineage-archive") -> bool:
    """A local folder whose children are year folders, or the root of the archive container (abfss/wasbs)."""
    if is_remote(source):
        match = re.match(r"^(?:abfss?|wasbs?)://([^@/]+)@[^/]+/?$", source)
        return match is not None and match.group(1) == archive_container
    path = Path(source)
    return path.is_dir() and any(_YEAR.match(child.name) and child.is_dir() for child in path.iterdir())


def archive_days(since: float | None, until: float | None, now: datetime | None = None) -> list[str] | None:
    """The `yyyy/mm/dd` folders that hold eventTimes in [since, until), or None when every folder must be read
    (no lower bound, or a range too long to list)."""
    if since is None:
        return None
    if until is not None and until <= since:
        return []
    first = datetime.fromtimestamp(since, timezone.utc).date()
    end = datetime.fromtimestamp(until, timezone.utc) if until is not None else (now or datetime.now(timezone.utc))
    last = (end - timedelta(microseconds=1)).date() if until is not None else end.date() + timedelta(days=1)
    if (last - first).days > MAX_PRUNED_DAYS:
        return None
    return [(first + timedelta(days=n)).strftime("%Y/%m/%d") for n in range((last - first).days + 1)]


def spark_paths(
    sources: Iterable[str], since: float | None, until: float | None, archive_container: str = "lineage-archive"
) -> list[str]:
    """The paths to give Spark: sources as they are, an archive root narrowed to the days of the range (one glob)."""
    paths = []
    for source in sources:
        days = archive_days(since, until) if is_archive_root(source, archive_container) else None
        if days is None:
            paths.append(source if is_remote(source) else str(Path(source).resolve()))
        elif days:
            root = source.rstrip("/") if is_remote(source) else str(Path(source).resolve())
            paths.append(f"{root}/{{{','.join(days)}}}" if len(days) > 1 else f"{root}/{days[0]}")
    return paths


def local_files(sources: Iterable[str], since: float | None = None, until: float | None = None) -> list[Path]:
    """The files of local sources, in name order: folders recursively, globs expanded, hidden names skipped; an
    archive root only for the days of the range. FileNotFoundError names a source that matches nothing."""
    files: list[Path] = []
    for source in sources:
        if is_remote(source) and not source.startswith("file:"):
            raise ValueError(f"{source}: the single-process runner reads local files only (use Spark for URLs)")
        source = re.sub(r"^file:(//)?", "", source)
        matches = (
            [Path(p) for p in sorted(glob.glob(source, recursive=True))] if _GLOB.search(source) else [Path(source)]
        )
        matches = [p for p in matches if p.exists()]
        if not matches:
            raise FileNotFoundError(f"no such file or folder: {source}")
        for path in matches:
            if path.is_file():
                files.append(path)
                continue
            days = archive_days(since, until) if is_archive_root(str(path)) else None
            roots = [path / day for day in days] if days is not None else [path]
            for root in roots:
                files.extend(_walk(root))
    return files


def _walk(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if not is_hidden(d))
        found.extend(Path(folder) / name for name in sorted(names) if not is_hidden(name))
    return found
