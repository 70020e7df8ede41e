"""RunSnapshot <-> compact JSON text (and zlib-compressed bytes), for the run-state stores. Pure.

The JSON uses short keys and leaves empty parts out; `from_json(to_json(s)) == s` for every snapshot.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import replace
from typing import Any

from olparser.jsontypes import JSON
from olparser.runs.model import DatasetFacts, RunSnapshot

FORMAT_VERSION = 1


class RunStateDecodeError(ValueError):
    """Stored run state that this version cannot read (corrupt, or written by an unknown format)."""


def to_json(snapshot: RunSnapshot) -> str:
    """Compact, ASCII-only JSON text of a snapshot."""
    document: JSON = {
        "v": FORMAT_VERSION,
        "id": snapshot.run_id,
        "ns": snapshot.job_namespace,
        "job": snapshot.job_name,
        "type": snapshot.event_type,
        "time": snapshot.event_time,
        "producer": snapshot.producer,
    }
    _put(document, "run", snapshot.run_facets)
    _put(document, "jobf", snapshot.job_facets)
    _put(document, "in", [_dataset_to_json(d) for d in snapshot.inputs])
    _put(document, "out", [_dataset_to_json(d) for d in snapshot.outputs])
    _put(document, "mt", snapshot.merge_times)
    _put(document, "tr", snapshot.truncated)
    _put(document, "st", snapshot.start_time)
    return json.dumps(document, separators=(",", ":"), sort_keys=True)


def from_json(text: str | bytes) -> RunSnapshot:
    """The snapshot stored as `to_json` text; RunStateDecodeError if it is not one."""
    try:
        document = json.loads(text)
        if document.get("v") != FORMAT_VERSION:
            raise RunStateDecodeError(f"unknown run state format {document.get('v')!r}")
        return RunSnapshot(
            run_id=document["id"],
            job_namespace=document["ns"],
            job_name=document["job"],
            event_type=document["type"],
            event_time=document["time"],
            producer=document["producer"],
            run_facets=document.get("run", {}),
            job_facets=document.get("jobf", {}),
            inputs=tuple(_dataset_from_json(d) for d in document.get("in", [])),
            outputs=tuple(_dataset_from_json(d) for d in document.get("out", [])),
            merge_times=document.get("mt", {}),
            truncated=int(document.get("tr", 0)),
            start_time=document.get("st", ""),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        if isinstance(error, RunStateDecodeError):
            raise
        raise RunStateDecodeError(f"stored run state is not readable: {error}") from error


def to_compressed(snapshot: RunSnapshot) -> bytes:
    """zlib-compressed `to_json` text: facets repeat a lot (producers, schema URLs), so this is 5-10x smaller."""
    return zlib.compress(to_json(snapshot).encode("ascii"), 6)


def from_compressed(data: bytes) -> RunSnapshot:
    try:
        text = zlib.decompress(data)
    except zlib.error as error:
        raise RunStateDecodeError(f"stored run state is not readable: {error}") from error
    return from_json(text)


def _dataset_to_json(dataset: DatasetFacts) -> JSON:
    document: JSON = {"ns": dataset.namespace, "name": dataset.name}
    _put(document, "f", dataset.facets)
    _put(document, "io", dataset.io_facets)
    _put(document, "mt", dataset.merge_times)
    return document


def _dataset_from_json(document: JSON) -> DatasetFacts:
    return DatasetFacts(
        namespace=document["ns"],
        name=document["name"],
        facets=document.get("f", {}),
        io_facets=document.get("io", {}),
        merge_times=document.get("mt", {}),
    )


def _put(document: JSON, key: str, value: Any) -> None:
    if value:
        document[key] = value


MAX_PASSED_ON_BYTES = 48_000  # what one writer passes on through a temporary dataset, compressed (a Table property)


def passed_on_to_bytes(datasets: tuple[DatasetFacts, ...]) -> bytes:
    """The datasets a run passes on through a temporary dataset, compressed JSON: with their facets (naming needs the
    symlinks; columns come from the schema) but no column lineage, and without facets when that is too large, so
    that it fits in one Table storage property."""
    full = zlib.compress(
        json.dumps(
            [
                _dataset_to_json(
                    replace(
                        d,
                        facets={k: v for k, v in d.facets.items() if k != "columnLineage"},
                        io_facets={},
                        merge_times={},
                    )
                )
                for d in datasets
            ],
            separators=(",", ":"),
        ).encode()
    )
    if len(full) <= MAX_PASSED_ON_BYTES:
        return full
    return zlib.compress(json.dumps([{"ns": d.namespace, "name": d.name} for d in datasets]).encode())


def passed_on_from_bytes(data: bytes) -> tuple[DatasetFacts, ...]:
    return tuple(_dataset_from_json(document) for document in json.loads(zlib.decompress(data)))
