"""qn-tester run as a user runs it (a subprocess), on the shipped rules."""

from __future__ import annotations

import os
import subprocess
import sys

from olparser.settings import PROJECT_ROOT

SCRIPT = PROJECT_ROOT / ".venv" / "bin" / "qn-tester"


COMMAND = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "tools.qn_tester"]


def qn_tester(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """qn-tester with the test process's environment (its rules: OL_TO_PURVIEW_MAPPINGS_PATH is the tests' copy, see
    tests/support/rules.py) and `env`."""
    environment = {**os.environ, **(env or {})}
    return subprocess.run(
        [*COMMAND, *args], input=stdin, capture_output=True, text=True, cwd=PROJECT_ROOT, env=environment, timeout=60
    )
