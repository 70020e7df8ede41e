"""Run every benchmark module in bench/ (or those named on the command line) and print their medians.

`--markdown` prints the figures they recorded (bench/report.py) as the docs' table; `--docs` writes them into the
generated table of docs/explanation/benchmarks.md, replacing the rows of the modules that ran and keeping the others.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path

from bench import report

PAGE = Path(__file__).resolve().parent.parent / "docs" / "explanation" / "benchmarks.md"
NOT_BENCHES = ("report",)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="bench modules to run (default: all)")
    parser.add_argument("--markdown", action="store_true", help="print the recorded figures as the docs' table")
    parser.add_argument(
        "--docs", action="store_true", help="write the recorded figures into docs/explanation/benchmarks.md"
    )
    args = parser.parse_args(argv)
    here = Path(__file__).parent
    names = args.names or sorted(
        m.name for m in pkgutil.iter_modules([str(here)]) if not m.name.startswith("_") and m.name not in NOT_BENCHES
    )
    for name in names:
        print(f"== bench.{name}", flush=True)
        importlib.import_module(f"bench.{name}").main()
    figures = report.take_recorded()
    if args.markdown:
        print(report.table([figure.row() for figure in figures]))
    if args.docs:
        report.write_table(PAGE, figures)
        print(f"{PAGE.relative_to(PAGE.parents[2])}: {len(figures)} rows of the bench table written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
