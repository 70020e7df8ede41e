"""One log format for every local component (`serve`, `worker`, their triggers and timers, `catalog`, the Spark
commands): `2026-11-25 18:20:05,000 INFO ol2purview.host: message`, one line per event.

- A message or traceback that spans lines is kept on one line (line breaks become ` | `), so that a log can be
  read, grepped and counted a line per event.
- uvicorn's loggers use the same handler (its servers get `log_config=None`, see `UVICORN_LOG_CONFIG`), and its
  lifecycle lines ("Started server process", "Shutting down", "Finished server process") are logged once per
  process: `serve` runs two servers (the function host and the embedded catalog) that share uvicorn's logger.
- The Azure SDK logs every request with its headers at INFO: it is held at WARNING.
"""

from __future__ import annotations

import logging
import threading

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LINE_BREAK = " | "
UVICORN_LOG_CONFIG = None  # uvicorn.Config(log_config=...): no config of its own, our handler on the root logger
LIFECYCLE_PREFIXES = (
    "Started server process",
    "Waiting for application",
    "Application startup complete",
    "Shutting down",
    "Waiting for connections to close",
    "Finished server process",
)


class OneLineFormatter(logging.Formatter):
    """LOG_FORMAT, with the line breaks of the message, the traceback and the stack shown as ` | `."""

    def __init__(self) -> None:
        super().__init__(LOG_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return LINE_BREAK.join(part for part in text.splitlines() if part.strip())


class LifecycleOnce(logging.Filter):
    """Lets each uvicorn lifecycle message through once per process; everything else passes."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        prefix = next((p for p in LIFECYCLE_PREFIXES if message.startswith(p)), None)
        if prefix is None:
            return True
        with self._lock:
            if prefix in self._seen:
                return False
            self._seen.add(prefix)
            return True


_lifecycle_once = LifecycleOnce()


def configure_logging(level: str | int = "info") -> None:
    """The root logger at `level` with the one-line handler on stderr (unless a handler is already there, as under
    pytest), uvicorn's lifecycle lines once, the Azure SDK at WARNING."""
    handler = logging.StreamHandler()
    handler.setFormatter(OneLineFormatter())
    logging.basicConfig(level=level.upper() if isinstance(level, str) else level, handlers=[handler])
    uvicorn_error = logging.getLogger("uvicorn.error")
    if _lifecycle_once not in uvicorn_error.filters:
        uvicorn_error.addFilter(_lifecycle_once)
    logging.getLogger("azure").setLevel(logging.WARNING)
