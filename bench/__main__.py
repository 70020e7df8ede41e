"""Run every benchmark module in bench/ (or those named on the command line) and print their medians.

`--markdown` prints the figures they recorded (bench/report.py) as README's table; `--readme` writes them into
README.md's generated table, replacing the rows of the modules that ran and keeping the others.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path

from bench import report

README = Path(__file__).resolve().parent.parent / "README.md"
NOT_BENCHES = ("report",)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="bench modules to run (default: all)")
    parser.add_argument("--markdown", action="store_true", help="print the recorded figures as README's table")
    parser.add_argument("--readme", action="store_true", help="write the recorded figures into README.md")
    args = parser.parse_args(argv)
    here = Path(__file__).parent
    names = args.names or sorted(m.name for m in pkgutil.iter_modules([str(here)])
                                 if not m.name.startswith("_") and m.name not in NOT_BENCHES)
    for name in names:
        print(f"== bench.{name}", flush=True)
        importlib.import_module(f"bench.{name}").main()
    figures = report.take_recorded()
    if args.markdown:
        print(report.table([figure.row() for figure in figures]))
    if args.readme:
        report.write_readme(README, figures)
        print(f"README.md: {len(figures)} rows of the bench table written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
