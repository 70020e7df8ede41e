"""A mapping engine that picks up a changed rule file without a restart.

`ReloadingEngine` looks at the file's modification time (and size) at most every `check_seconds`; when it changed,
the file is loaded again and, if valid, replaces the rules for every later mapping. An invalid new file keeps the
old rules and logs the problem once per change, so a half-saved edit never stops the worker; `status()` says so
until the file is fixed. `watch()` (the local host calls it) looks every `check_seconds` from a thread of its own,
so that a change is noticed and logged within seconds even when no event arrives. Rules given inline (the
`OlToPurviewMappings` app setting) cannot change while the process runs and are not watched.

`rules_problem(settings)` is the check `ol2purview serve` and `worker` make before they start: the first problem
of the rules in force, as `FILE:LINE:COLUMN: rule N 'name', field F: what`.

Every command reads the same rules by the same rule (`Settings.mappings_path`, olparser/settings.py): the one rule
file, config/OlToPurviewMappings.json, in a checkout or the deployment zip; the copy packaged in an installed wheel;
OL_TO_PURVIEW_MAPPINGS_PATH (or the inline setting) over both. `rules_source(settings)` is how each one says which.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from olparser.naming.engine import MappingEngine, MappingResult
from olparser.naming.mounts import MountMemo
from olparser.naming.rules import ConfigError, located, parse_json, unwrap
from olparser.settings import PROJECT_ROOT, Settings

log = logging.getLogger(__name__)
DEFAULT_CHECK_SECONDS = 2.0


PATH_SETTING, INLINE_SETTING = "OL_TO_PURVIEW_MAPPINGS_PATH", "OlToPurviewMappings"


def rules_source(settings: Settings) -> str:
    """Which rules `settings` name, as every command says it: the inline app setting, else the file
    (`config/OlToPurviewMappings.json` in a checkout, `shown_path`)."""
    if settings.mappings_inline and settings.mappings_inline.strip():
        return f"app setting {INLINE_SETTING}"
    return shown_path(Path(settings.mappings_path))


def shown_path(path: Path) -> str:
    """The rule file as the status endpoint shows it: relative to the app's folder when it lies inside it
    (`config/OlToPurviewMappings.json`), so that an answer never spells out where the app is installed; a file the
    operator placed elsewhere keeps the path they configured."""
    try:
        return Path(path).resolve().relative_to(PROJECT_ROOT).as_posix()
    except ValueError:
        return str(path)


def _signature(path: Path) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


class RulesFileError(ValueError):
    """A rule file that cannot be used; its text is the located first problem (`FILE:LINE:COLUMN: ...`)."""


def load_rules_file(path: Path) -> MappingEngine:
    """The engine of the rule file at `path`, or RulesFileError naming the file, line, column and rule at fault."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise RulesFileError(f"{path}: cannot read the mapping rules: {exc.strerror or exc}") from None
    try:
        return MappingEngine.from_rules(unwrap(parse_json(text, str(path))))
    except ConfigError as exc:
        raise RulesFileError(located(exc, str(path), text)) from None


def rules_problem(settings: Settings) -> str | None:
    """What is wrong with the mapping rules `settings` name (the inline app setting, else the file), or None."""
    try:
        if settings.mappings_inline and settings.mappings_inline.strip():
            MappingEngine.from_settings(settings)
        else:
            load_rules_file(Path(settings.mappings_path))
    except (ConfigError, RulesFileError) as exc:
        return str(exc)
    return None


class ReloadingEngine:
    """Delegates to the current `MappingEngine` of `path`, reloading it when the file changes."""

    def __init__(
        self,
        path: str | Path,
        *,
        check_seconds: float = DEFAULT_CHECK_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = Path(path)
        self._check_seconds = check_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._signature = _signature(self.path)
        self._engine = load_rules_file(self.path)  # a bad file at start is an error, as without reloading
        self._checked_at = clock()
        self.reloads = 0
        self.error: str | None = None  # why the file's current version is not in force (None: it is)
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> "MappingEngine | ReloadingEngine":
        """Inline rules (`OlToPurviewMappings`): a plain engine. A rule file: an engine that follows its changes.
        Logs which rules it read (the Function's and the worker's way of saying it)."""
        engine: MappingEngine | ReloadingEngine
        if settings.mappings_inline and settings.mappings_inline.strip():
            engine = MappingEngine.from_settings(settings)
        else:
            engine = cls(settings.mappings_path)
        log.info("mapping rules: %s (%d rules)", rules_source(settings), len(engine.rules))
        return engine

    @property
    def current(self) -> MappingEngine:
        """The engine for the rules in force now (the file is looked at when `check_seconds` have passed)."""
        now = self._clock()
        if now - self._checked_at < self._check_seconds:
            return self._engine
        with self._lock:
            if now - self._checked_at >= self._check_seconds:
                self._checked_at = now
                self._reload_if_changed()
            return self._engine

    def snapshot(self) -> MappingEngine:
        """The rules in force now, for one plan (`RuleSource`): a reload after this call does not change them."""
        return self.current

    def _reload_if_changed(self) -> None:
        signature = _signature(self.path)
        if signature is None or signature == self._signature:
            return
        self._signature = signature
        try:
            engine = load_rules_file(self.path)
        except (RulesFileError, OSError, ValueError) as exc:
            log.error(
                "mapping rules in %s changed but cannot be used, so the previous rules stay in force: %s",
                self.path,
                exc,
            )
            self.error = str(exc)  # after the log line: whoever sees the error can read why in the log
            return
        log.info("mapping rules reloaded from %s (%d rules)", self.path, len(engine.rules))
        self._engine = engine
        self.error = None
        self.reloads += 1

    def refresh(self) -> None:
        """Look at the file now, whenever it was last looked at (reloads, and logs, when it changed)."""
        with self._lock:
            self._checked_at = self._clock()
            self._reload_if_changed()

    def status(self) -> dict[str, Any]:
        """For the status endpoint: whether the file's current version is in force, and if not why."""
        self.current  # noqa: B018 - looks at the file when check_seconds have passed
        return {
            "ok": self.error is None,
            "path": shown_path(self.path),
            "rules": len(self._engine.rules),
            "reloads": self.reloads,
            **({"error": self.error} if self.error else {}),
        }

    def watch(self) -> None:
        """Look at the file every `check_seconds` from a daemon thread (once; `close()` stops it)."""
        with self._lock:
            if self._watcher is not None:
                return
            self._watcher = threading.Thread(target=self._watch, name="ol2purview-rules-watcher", daemon=True)
        self._watcher.start()

    def _watch(self) -> None:
        while not self._stop.wait(self._check_seconds):
            try:
                self.current  # noqa: B018 - reloads (and logs) when the file changed
            except Exception:  # never let the watcher die: the next mapping looks again
                log.exception("watching the mapping rules in %s failed", self.path)

    def close(self) -> None:
        self._stop.set()

    @property
    def rules(self) -> Any:
        return self.current.rules

    @property
    def datasets_met(self) -> dict[tuple[Any, ...], tuple[Any, Any]]:
        return self.current.datasets_met

    @property
    def mount_memo(self) -> MountMemo:
        return self.current.mount_memo

    def map(self, namespace: str, name: str, **options: Any) -> MappingResult:
        return self.current.map(namespace, name, **options)

    def explain(self, namespace: str, name: str, **options: Any) -> Any:
        return self.current.explain(namespace, name, **options)
