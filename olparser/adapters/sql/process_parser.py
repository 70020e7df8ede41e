"""The SQL parser adapter: `SqlParser` is a `ParseSql` (query, dialect) -> ParsedSql | SqlParseFailure that runs
openlineage-sql in worker processes (`olparser.adapters.sql.worker`), each request with a deadline.

Why processes: the parser is a Rust extension, so a call cannot be interrupted in a thread, and a deep expression
overflows its stack and kills the process that made the call (measured: a 90 KB `a+a+...` chain). In a worker, a
request that passes its deadline gets the worker killed (a new one starts on the next request) and a crash costs only
the worker. Bounds: a query over `max_chars` is refused before anything is started; each parse has `timeout_seconds`.

Cost: workers start on the first query (about 0.1 s, outside any deadline) and are reused; a request costs one pipe
round trip on top of the parse (bench/sql_lineage.py). Results are cached by the hash of (dialect, query): a run's
plan is built again on every event of the run, and the same statements run every day. A failure is logged once per
query (its reason, never the SQL, which may hold secrets in literals) and cached like a result, so one bad statement
costs one parse per process.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import os
import select
import subprocess
import sys
import threading
import time
import weakref
from collections import OrderedDict
from typing import Any

from olparser.sql.model import ParsedSql, ParseResult, SqlParseFailure

log = logging.getLogger(__name__)

DEFAULT_MAX_CHARS = 65_536
DEFAULT_TIMEOUT_SECONDS = 2.0
DEFAULT_WORKERS = 2
CACHE_SIZE = 1024
STARTUP_SECONDS = 60.0
RETRY_START_SECONDS = 60.0  # after a worker could not start, queries fail at once for this long
_READ_CHUNK = 1 << 16


class WorkerGone(Exception):
    """The worker process ended (a crash) or could not be reached."""


class _Worker:
    """One `python -m olparser.adapters.sql.worker` with a line-based pipe protocol and deadlines on every read."""

    def __init__(self, startup_seconds: float) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # the Functions host adds paths at run time
        self.process = subprocess.Popen(
            [sys.executable, "-m", "olparser.adapters.sql.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self._buffer = b""
        try:
            ready = self._read_line(time.monotonic() + startup_seconds)
        except (TimeoutError, WorkerGone):
            self.kill()
            raise
        if not json.loads(ready).get("ready"):
            self.kill()
            raise WorkerGone("the SQL parser process did not start")

    def ask(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(request, separators=(",", ":")).encode("utf-8") + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise WorkerGone(self._ended()) from None
        answer: dict[str, Any] = json.loads(self._read_line(deadline))
        return answer

    def _read_line(self, deadline: float) -> bytes:
        assert self.process.stdout is not None
        descriptor = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            readable, _, _ = select.select([descriptor], [], [], remaining)
            if not readable:
                continue
            chunk = os.read(descriptor, _READ_CHUNK)
            if not chunk:
                raise WorkerGone(self._ended())
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _ended(self) -> str:
        code = self.process.wait(timeout=5)
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        return f"the SQL parser process ended ({how}) while parsing the statement"

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


class SqlParser:
    """`ParseSql` over a pool of at most `workers` parser processes (started on demand), with a size limit, a
    deadline per parse and a result cache. Thread-safe: queue triggers build plans concurrently."""

    def __init__(
        self,
        *,
        max_chars: int = DEFAULT_MAX_CHARS,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        workers: int = DEFAULT_WORKERS,
        cache_size: int = CACHE_SIZE,
        startup_seconds: float = STARTUP_SECONDS,
    ) -> None:
        self.max_chars = max_chars
        self.timeout_seconds = timeout_seconds
        self.workers = max(1, workers)
        self.cache_size = cache_size
        self.startup_seconds = startup_seconds
        self._idle: list[_Worker] = []
        self._started = 0
        self._available = threading.Condition()
        self._cache: OrderedDict[bytes, ParseResult] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._start_failed_until = 0.0
        self.parses = 0  # requests that reached a worker (not cached, not refused by size)
        _live_parsers.add(self)

    @classmethod
    def from_settings(cls, settings: Any) -> "SqlParser":
        return cls(max_chars=settings.max_sql_chars, timeout_seconds=settings.sql_parse_timeout_seconds)

    def __call__(self, sql: str, dialect: str) -> ParseResult:
        key = hashlib.sha256(f"{dialect}\x00{sql}".encode("utf-8", "surrogatepass")).digest()
        with self._cache_lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        if len(sql) > self.max_chars:
            result: ParseResult = SqlParseFailure(
                f"the query has {len(sql):,} characters, more than the limit of "
                f"{self.max_chars:,} (setting MAX_SQL_CHARS)"
            )
        else:
            result = self._parse(sql, dialect)
        if isinstance(result, SqlParseFailure):
            log.warning("column lineage from SQL: %s; the table lineage is written without columns", result.reason)
        with self._cache_lock:
            self._cache[key] = result
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return result

    def _parse(self, sql: str, dialect: str) -> ParseResult:
        try:
            worker = self._take()
        except (TimeoutError, WorkerGone, OSError) as exc:
            self._start_failed_until = time.monotonic() + RETRY_START_SECONDS
            return SqlParseFailure(f"the SQL parser process could not start ({type(exc).__name__})")
        if worker is None:
            return SqlParseFailure("the SQL parser process could not start (retried after a minute)")
        self.parses += 1
        try:
            answer = worker.ask({"sql": sql, "dialect": dialect}, self.timeout_seconds)
        except TimeoutError:
            self._discard(worker)
            return SqlParseFailure(
                f"parsing took longer than {self.timeout_seconds:g} s (setting SQL_PARSE_TIMEOUT_SECONDS)"
            )
        except WorkerGone as gone:
            self._discard(worker)
            return SqlParseFailure(str(gone))
        self._give_back(worker)
        if "parsed" in answer:
            return ParsedSql.from_json(answer["parsed"])
        return SqlParseFailure(str(answer.get("error") or "the SQL parser gave no answer"))

    def _take(self) -> _Worker | None:
        with self._available:
            while not self._idle and self._started >= self.workers:
                self._available.wait()
            if self._idle:
                return self._idle.pop()
            if time.monotonic() < self._start_failed_until:
                return None
            self._started += 1
        try:
            return _Worker(self.startup_seconds)
        except BaseException:
            with self._available:
                self._started -= 1
                self._available.notify()
            raise

    def _give_back(self, worker: _Worker) -> None:
        with self._available:
            self._idle.append(worker)
            self._available.notify()

    def _discard(self, worker: _Worker) -> None:
        worker.kill()
        with self._available:
            self._started -= 1
            self._available.notify()

    def close(self) -> None:
        """Stop the idle workers (a busy one is stopped when it is given back... or when its parent exits)."""
        with self._available:
            idle, self._idle = self._idle, []
            self._started -= len(idle)
            self._available.notify_all()
        for worker in idle:
            worker.kill()


_live_parsers: "weakref.WeakSet[SqlParser]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for parser in list(_live_parsers):
        parser.close()
