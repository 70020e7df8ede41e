"""Column lineage from SQL: what parsing costs per event, on the real `sql` facets of ../shared/openlineage.

- per event with a `sql` facet (every such event in events/ and sequences/, templates included: the parser does not
  care), the SqlParser call the builder makes: uncached (a worker round trip and the parse), cached (a repeated
  statement: every later event of a run, every rebuild), and openlineage-sql called in this process for comparison
  (what the worker process adds);
- build_lineage of the real Dataproc CTAS run with its columnLineage facet removed, with and without derivation;
- the bounds: refusing an oversize query, a parse abandoned at its deadline, a crash and the next statement's new
  worker.

Medians and 99th percentiles over REPEAT rounds of every event. Run as `.venv/bin/python -m bench sql_lineage`.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Callable

from bench import MAPPINGS_PATH
from olparser.adapters.sql.process_parser import SqlParser
from olparser.lineage import LineageOptions, build_lineage
from olparser.naming import MappingEngine
from olparser.runs.merge import merge_events

SHARED = Path(__file__).resolve().parents[2] / "shared" / "openlineage"
REPEAT = 200


def real_sql_facets() -> list[tuple[str, str]]:
    """(query, dialect) of every event with a `sql` job facet, in file order."""
    from olparser.lineage.sql_columns import sql_dialect

    found = []
    for path in sorted([*SHARED.glob("events/*.json"), *SHARED.glob("sequences/*/*.json")]):
        document = json.loads(path.read_text())
        for event in document if isinstance(document, list) else [document]:
            facet = ((event.get("job") or {}).get("facets") or {}).get("sql")
            if isinstance(facet, dict) and isinstance(facet.get("query"), str):
                found.append((facet["query"], sql_dialect(facet, event.get("producer") or "")))
    return found


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]
    return f"median {statistics.median(ordered) * 1e6:,.0f} us, p99 {p99 * 1e6:,.0f} us"


def timed(call: Callable[[], object], rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def main() -> None:
    import openlineage_sql

    facets = real_sql_facets()
    print(f"{len(facets)} events with a sql facet, {len(set(facets))} distinct statements")
    uncached = SqlParser(cache_size=0)
    cached = SqlParser()
    try:
        uncached(*facets[0])  # start the worker outside the measurement
        samples = [
            s
            for _ in range(REPEAT)
            for query, dialect in facets
            for s in timed(lambda q=query, d=dialect: uncached(q, d), 1)
        ]
        print(f"SqlParser, uncached (worker round trip + parse): {percentiles(samples)} per event")
        for query, dialect in facets:
            cached(query, dialect)
        samples = [
            s
            for _ in range(REPEAT)
            for query, dialect in facets
            for s in timed(lambda q=query, d=dialect: cached(q, d), 1)
        ]
        print(f"SqlParser, cached: {percentiles(samples)} per event")
        samples = [
            s
            for _ in range(REPEAT)
            for query, dialect in facets
            for s in timed(lambda q=query, d=dialect: openlineage_sql.parse([q], dialect=d), 1)
        ]
        print(f"openlineage_sql.parse in this process (no bound, for comparison): {percentiles(samples)} per event")

        events = [
            json.loads(p.read_text())
            for p in sorted(
                (SHARED / "sequences" / "compat-tests__spark_dataproc_simple_producer_test_complete").glob(
                    "[0-9]*.json"
                ),
                key=lambda p: int(p.stem),
            )
        ]
        events = [e for e in events if e["run"]["runId"] == "019299c5-73cf-7069-a70f-74eb8070b577"]
        for event in events:
            for output in event.get("outputs") or ():
                (output.get("facets") or {}).pop("columnLineage", None)
        run = merge_events(events)
        engine, options = MappingEngine.from_path(MAPPINGS_PATH), LineageOptions()
        plain = timed(lambda: build_lineage(run, engine, options), REPEAT * 5)
        derived = timed(lambda: build_lineage(run, engine, options, parse_sql=cached), REPEAT * 5)
        print(
            f"build_lineage of the real CTAS run without its columnLineage: {percentiles(plain)} without "
            f"derivation, {percentiles(derived)} with it (statement cached)"
        )

        bounded = SqlParser(max_chars=10_000_000, timeout_seconds=0.5, cache_size=0)
        chain = "INSERT INTO t SELECT " + "+".join(f"c{i}" for i in range(30_000)) + " AS z FROM x"
        unions = "INSERT INTO t " + " UNION ALL ".join(f"SELECT a FROM x{i}" for i in range(3_000))
        refused = timed(lambda: cached(chain, "spark"), 1)[0]
        print(f"an oversize query ({len(chain):,} characters) refused in {refused * 1e6:,.0f} us")
        started = time.perf_counter()
        print(
            f"3,000 UNIONs ({len(unions):,} characters): {bounded(unions, 'spark').reason} after "  # type: ignore
            f"{time.perf_counter() - started:.2f} s"
        )
        started = time.perf_counter()
        print(
            f"a 30,000-term sum: {bounded(chain, 'spark').reason} after "  # type: ignore[union-attr]
            f"{time.perf_counter() - started:.2f} s"
        )
        started = time.perf_counter()
        bounded("INSERT INTO t SELECT a FROM b", "spark")
        print(f"the next statement, on a new worker: {time.perf_counter() - started:.2f} s")
        bounded.close()
    finally:
        uncached.close()
        cached.close()


if __name__ == "__main__":
    main()
