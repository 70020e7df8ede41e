"""Cost per KiB of event, honest and hostile (issue #15): intake (`read_event`, default limits, then limits raised so
the shape gets through) and mapping (the naming engine over the event's inputs and outputs with its mount points, as
the worker does). Payloads are tools/samples/hostile.py, the ones the hostile suite checks. Prints medians of CPU
time per KiB, and the answer intake gives at default limits.
"""

from __future__ import annotations

import statistics
from typing import Any, Callable

from bench import MAPPINGS_PATH
from olparser.contract import IngestError, IntakeLimits, read_event
from olparser.naming import MappingEngine, mounts_from_facet
from olparser.naming.tokens import tokenize_name
from tools.samples import hostile as payloads
from tools.samples.hostile import cpu_times

ROUNDS = 5
RAISED = IntakeLimits(
    max_datasets_per_event=100_000, max_facets_per_event=1_000_000, max_mount_points=100_000, max_gzip_members=1_000_000
)


def _median_seconds(fn: Callable[[], Any], rounds: int) -> float:
    return statistics.median(cpu_times(fn, rounds))


def _answer(data: bytes, limits: IntakeLimits) -> str:
    try:
        accepted = read_event(data, {}, limits)
    except IngestError as error:
        setting = error.error.rpartition("(setting ")[2].rstrip(")")
        return f"{error.status} ({setting})" if setting != error.error else str(error.status)
    return "200" + (" (warnings)" if accepted.warnings else "")


def _mapping_seconds(engine: MappingEngine, event: dict[str, Any], rounds: int) -> float:
    facets = event.get("run", {}).get("facets", {})
    mounts = mounts_from_facet(facets.get("environment-properties"))
    datasets = [*event.get("inputs", ()), *event.get("outputs", ())]

    def run() -> None:
        tokenize_name.cache_clear()
        for dataset in datasets:
            engine.map(dataset["namespace"], dataset["name"], mounts=mounts, workspace_url=payloads.WORKSPACE)

    return _median_seconds(run, rounds)


SHAPES: list[tuple[str, Callable[[], Any]]] = [
    ("honest, 1 MB (900 inputs, schemas, column lineage)", lambda: payloads.honest_event(1_000_000)),
    ("names of 4,000 '[' (200 inputs)", payloads.bracket_names_event),
    ("paths of 4,000 chars (200 inputs), honest twin", payloads.honest_long_names_event),
    ("15,000 mounts x 15,000 /mnt inputs", payloads.mounts_event),
    ("400,000 empty gzip members", lambda: payloads.empty_gzip_members_body(400_000)),
    ("100,000 empty gzip members", lambda: payloads.empty_gzip_members_body(100_000)),
    ("600,000 malformed facets", payloads.malformed_facets_event),
    ("900 outputs x 3 malformed read facets", payloads.malformed_read_facets_event),
    ("600 inputs x 600 outputs", lambda: payloads.inputs_outputs_event(600, 600)),
    ("2,000 inputs x 1,500 outputs", lambda: payloads.inputs_outputs_event(2_000, 1_500)),
    ("eventTime 9999-12-31", payloads.forged_date_event),
]


def main() -> None:
    engine = MappingEngine.from_path(MAPPINGS_PATH)
    print(f"CPU per KiB of body, medians of {ROUNDS} rounds (µs/KiB); intake at default limits and with limits raised")
    print(f"{'shape':52} {'KiB':>8} {'answer':>28} {'intake':>9} {'raised':>9} {'mapping':>9}")
    for label, make in SHAPES:
        shape = make()
        data = shape if isinstance(shape, bytes) else payloads.body(shape)
        kib = len(data) / 1024
        rounds = ROUNDS if kib < 4096 else 3
        intake = _median_seconds(lambda data=data: read_event(data, {}, IntakeLimits()), rounds)
        raised = _median_seconds(lambda data=data: read_event(data, {}, RAISED), rounds)
        mapping = "-" if isinstance(shape, bytes) else f"{_mapping_seconds(engine, shape, rounds) / kib * 1e6:9.1f}"
        print(
            f"{label:52} {kib:8,.0f} {_answer(data, IntakeLimits()):>28} {intake / kib * 1e6:9.1f} "
            f"{raised / kib * 1e6:9.1f} {mapping:>9}",
            flush=True,
        )


if __name__ == "__main__":
    main()
