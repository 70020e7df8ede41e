"""The repository the tests run in, and a copy of it as a clone from GitHub has it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SHARED = PROJECT_ROOT.parent / "shared"  # the shared reference material (tests marked `shared` need it)


def repository_copy(root: Path) -> Path:
    """The repository's files (tracked, and new ones not ignored) copied to `root`, modification times kept, as a
    clone from GitHub has them: no .venv, node_modules or .data, and no ../shared next to it."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=PROJECT_ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source = PROJECT_ROOT / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    return root
