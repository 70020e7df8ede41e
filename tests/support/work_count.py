"""Counting work, for tests that bound how work grows: the same count on a loaded machine as on an idle one (never a
timer: tests/unit/test_no_timing.py). Lines of Python run (sys.settrace) see loops and calls in the project's code;
what they cannot see (work inside a regular expression or zlib) is counted where it can be (`counted_inflation`:
compressed bytes offered to zlib) and measured as CPU time by the benchmarks (bench/)."""

from __future__ import annotations

import sys
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, Iterator
from unittest import mock

import olparser

OLPARSER = str(Path(olparser.__file__).parent)  # the product's code: what `lines_run` counts by default


class TooMuchWork(AssertionError):
    """`lines_run` passed its limit: the work stopped there (a regression fails at the bound, not after hours)."""


def lines_run(fn: Callable[[], object], where: str = OLPARSER, limit: int | None = None) -> int:
    """How many lines of the code in files whose path starts with `where` run for `fn()` (sys.settrace); past
    `limit` lines, TooMuchWork is raised out of `fn`."""
    count = 0

    def trace(frame, event, arg):  # noqa: ARG001 - sys.settrace's signature
        nonlocal count
        if not frame.f_code.co_filename.startswith(where):
            return None
        if event == "line":
            count += 1
            if limit is not None and count > limit:
                raise TooMuchWork(f"more than {limit:,} lines of {where} run")
        return trace

    sys.settrace(trace)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count


@dataclass
class Inflation:
    """What gzip decompression did: the decompressors made (one per gzip member) and the compressed bytes offered to
    them, and the bytes they produced."""

    members: int = 0
    offered: int = 0
    produced: int = 0


class _CountingInflater:
    def __init__(self, inner, counted: Inflation) -> None:
        self._inner, self._counted = inner, counted

    def decompress(self, data, max_length: int = 0) -> bytes:
        self._counted.offered += len(data)
        out = self._inner.decompress(data, max_length)
        self._counted.produced += len(out)
        return out

    @property
    def eof(self) -> bool:
        return self._inner.eof

    @property
    def unused_data(self) -> bytes:
        return self._inner.unused_data


@contextmanager
def counted_inflation() -> Iterator[Inflation]:
    """Count the gzip decompression intake does (olparser/contract/body.py) while the block runs."""
    counted = Inflation()

    def decompressobj(wbits: int = zlib.MAX_WBITS):
        counted.members += 1
        return _CountingInflater(zlib.decompressobj(wbits), counted)

    counting_zlib = SimpleNamespace(decompressobj=decompressobj, MAX_WBITS=zlib.MAX_WBITS, error=zlib.error)
    with mock.patch("olparser.contract.body.zlib", counting_zlib):
        yield counted
