"""qn-tester run as a user runs it (a subprocess), on the one rule file (config/OlToPurviewMappings.json)."""

from __future__ import annotations

import os
import subprocess
import sys

from olparser.settings import PROJECT_ROOT

SCRIPT = PROJECT_ROOT / ".venv" / "bin" / "qn-tester"


COMMAND = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "tools.qn_tester"]
# The first line qn-tester writes on stderr when it maps: which rules it read (every command says it).
RULES_LINE = "qn-tester: rules from config/OlToPurviewMappings.json (55 rules)"


def after_rules_line(stderr: str) -> list[str]:
    """qn-tester's stderr lines after the line that says which rules it read (checked to be the first)."""
    lines = stderr.splitlines()
    assert lines[:1] == [RULES_LINE], stderr
    return lines[1:]


def qn_tester(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """qn-tester with the test process's environment (its rules: OL_TO_PURVIEW_MAPPINGS_PATH is the one rule file,
    tests/support/rules.py) and `env`."""
    environment = {**os.environ, **(env or {})}
    return subprocess.run(
        [*COMMAND, *args], input=stdin, capture_output=True, text=True, cwd=PROJECT_ROOT, env=environment, timeout=60
    )
