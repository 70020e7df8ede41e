"""Build the deployment zip of the Function App: the project folder minus what `.funcignore` leaves out, as
`func azure functionapp publish` would send it (function_app.py, host.json, requirements.txt, olparser/, config/).

    python deploy/package.py [--out dist/ol2purview-function.zip]

`.funcignore` patterns are matched (fnmatch) against each file's and folder's own name at every level; blank lines
and `#` comments are skipped. Files are written in sorted order with a fixed timestamp, so the same tree gives the
same zip. The zip is what `az functionapp deployment source config-zip --build-remote true` takes (Azure installs
requirements.txt).
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
import zipfile
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = PROJECT_ROOT / "dist" / "ol2purview-function.zip"
FIXED_TIME = (2020, 1, 1, 0, 0, 0)  # zip entries carry no build time: reproducible archives


def ignore_patterns(root: Path = PROJECT_ROOT) -> list[str]:
    path = root / ".funcignore"
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    return [line.strip().rstrip("/") for line in lines if line.strip() and not line.lstrip().startswith("#")]


def _ignored(name: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(name, pattern) for pattern in patterns)


def package_files(root: Path = PROJECT_ROOT) -> list[Path]:
    """The files of the deployment package, relative to `root`, sorted."""
    patterns = ignore_patterns(root)
    found: list[Path] = []

    def walk(folder: Path) -> None:
        for entry in sorted(folder.iterdir()):
            if _ignored(entry.name, patterns) or entry.is_symlink():
                continue
            if entry.is_dir():
                walk(entry)
            elif entry.is_file():
                found.append(entry.relative_to(root))

    walk(root)
    return found


def build_zip(out: Path = DEFAULT_OUT, root: Path = PROJECT_ROOT) -> list[Path]:
    """Write the package to `out`; returns the files it holds."""
    files = package_files(root)
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for relative in files:
            info = zipfile.ZipInfo(relative.as_posix(), date_time=FIXED_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, (root / relative).read_bytes())
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python deploy/package.py", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"the zip to write (default {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    files = build_zip(args.out.resolve())
    print(f"{args.out}: {len(files)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
