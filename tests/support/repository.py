"""The repository the tests run in, and a copy of it as a clone from GitHub has it (set up to run, `lone_copy`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
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


def lone_copy(folder: Path) -> Path:
    """The repository's files (tracked, and new ones not ignored) in `folder/ol2purview`, with no `../shared` next to
    it, set up as `make venv node` would, without a download: node_modules linked to this checkout's, and a .venv whose
    path is the copy itself and this checkout's site-packages (their packages, not this checkout's editable install),
    with `ol2purview` and `qn-tester` running the copy's tools/, and up to date for make."""
    root = repository_copy(folder / "ol2purview")
    assert not (folder / "shared").exists()  # the clone's ../shared
    (root / "node_modules").symlink_to(PROJECT_ROOT / "node_modules")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True)
    site = Path(sysconfig.get_paths(vars={"base": str(root / ".venv"), "platbase": str(root / ".venv")})["purelib"])
    packages = Path(sysconfig.get_paths()["purelib"])  # this checkout's .venv: its path only, not its .pth files
    (site / "ol2purview-copy.pth").write_text(f"{root}\n{packages}\n", encoding="utf-8")
    for command, module in (("ol2purview", "tools.cli"), ("qn-tester", "tools.qn_tester")):
        script = root / ".venv" / "bin" / command
        script.write_text(
            f"#!{root / '.venv' / 'bin' / 'python'}\nimport sys\nfrom {module} import main\nsys.exit(main())\n",
            encoding="utf-8",
        )
        script.chmod(0o755)
    (root / ".venv" / "bin" / ".installed").touch()  # newer than pyproject.toml: `make venv` has nothing to do
    return root
