"""A mapping engine that picks up a changed rule file without a restart.

`ReloadingEngine` looks at the file's modification time (and size) at most every `check_seconds`; when it changed,
the file is loaded again and, if valid, replaces the rules for every later mapping. An invalid new file keeps the
old rules and logs the problem once per change, so a half-saved edit never stops the worker. Rules given inline
(the `OlToPurviewMappings` app setting) cannot change while the process runs and are not watched.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

from olparser.settings import Settings

from olparser.naming.engine import MappingEngine, MappingResult
from olparser.naming.rules import ConfigError

log = logging.getLogger(__name__)
DEFAULT_CHECK_SECONDS = 2.0


def _signature(path: Path) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


class ReloadingEngine:
    """Delegates to the current `MappingEngine` of `path`, reloading it when the file changes."""

    def __init__(self, path: str | Path, *, check_seconds: float = DEFAULT_CHECK_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.path = Path(path)
        self._check_seconds = check_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._signature = _signature(self.path)
        self._engine = MappingEngine.from_path(self.path)  # a bad file at start is an error, as without reloading
        self._checked_at = clock()
        self.reloads = 0

    @classmethod
    def from_settings(cls, settings: Settings) -> "MappingEngine | ReloadingEngine":
        """Inline rules (`OlToPurviewMappings`): a plain engine. A rule file: an engine that follows its changes."""
        if settings.mappings_inline and settings.mappings_inline.strip():
            return MappingEngine.from_settings(settings)
        return cls(settings.mappings_path)

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

    def _reload_if_changed(self) -> None:
        signature = _signature(self.path)
        if signature is None or signature == self._signature:
            return
        self._signature = signature
        try:
            engine = MappingEngine.from_path(self.path)
        except (ConfigError, OSError, ValueError) as exc:
            log.error("mapping rules in %s changed but cannot be used, so the previous rules stay in force: %s",
                      self.path, exc)
            return
        self._engine = engine
        self.reloads += 1
        log.info("mapping rules reloaded from %s (%d rules)", self.path, len(engine.rules))

    @property
    def rules(self) -> Any:
        return self.current.rules

    def map(self, namespace: str, name: str, **options: Any) -> MappingResult:
        return self.current.map(namespace, name, **options)

    def explain(self, namespace: str, name: str, **options: Any) -> Any:
        return self.current.explain(namespace, name, **options)
