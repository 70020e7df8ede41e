"""`python -m tools.docs [--check]`: write the generated reference pages (docs/reference/settings.md, cli.md), or
with --check say which differ from what the code generates (exit 1) without writing."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import cli, settings

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = {"reference/settings.md": settings.page, "reference/cli.md": cli.page}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.docs", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say which pages are out of date (exit 1)")
    args = parser.parse_args(argv)
    missing = settings.undocumented()
    if missing:
        print(f"settings read by the code with no row in tools/docs/settings.py: {', '.join(missing)}", file=sys.stderr)
        return 1
    stale = []
    for name, make in PAGES.items():
        path = DOCS / name
        text = make()
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(name)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    verb = "out of date (run `make docs-reference`)" if args.check else "written"
    print(f"docs/{', docs/'.join(stale)}: {verb}" if stale else "generated reference pages up to date")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
