"""The package Azure receives (everything `.funcignore` does not leave out) works on its own: it imports without
the local tools, the tests or `../shared`, and it carries the mapping rules and typedefs it loads."""
from __future__ import annotations

import fnmatch
import shutil
import subprocess
import sys
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def _ignored(name: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(name, pattern) for pattern in patterns)


def _deployed_files(target: Path) -> list[str]:
    patterns = [line.strip() for line in (PROJECT_ROOT / ".funcignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    for entry in sorted(PROJECT_ROOT.iterdir()):
        if _ignored(entry.name, patterns):
            continue
        if entry.is_dir():
            shutil.copytree(entry, target / entry.name,
                            ignore=lambda _d, names: [n for n in names if _ignored(n, patterns)])
        else:
            shutil.copy2(entry, target / entry.name)
    return sorted(p.name for p in target.iterdir())


def test_the_deployed_package_is_exactly_the_function_and_its_core(tmp_path):
    assert _deployed_files(tmp_path) == ["config", "function_app.py", "host.json", "olparser", "requirements.txt"]


def test_the_deployed_package_imports_and_builds_its_parts_without_tools_tests_or_shared(tmp_path):
    _deployed_files(tmp_path)
    script = (
        "import sys\n"
        "sys.path[:] = [p for p in sys.path if p not in ('', %r)]\n"
        "sys.path.insert(0, %r)\n"
        "sys.modules['tools'] = sys.modules['tests'] = None  # importing either now fails\n"
        "import function_app\n"
        "from olparser.runtime import process_runtime\n"
        "rt = process_runtime()\n"
        "import olparser\n"
        "assert olparser.__file__.startswith(%r), olparser.__file__\n"
        "print(len(function_app.app.get_functions()), rt.settings.run_state_store, rt.catalog_target().kind,\n"
        "      rt.engine().map('abfss://raw@lake.dfs.core.windows.net', '/sales/orders').qualified_name)\n"
    ) % (str(PROJECT_ROOT), str(tmp_path), str(tmp_path))
    env = {"PATH": "/usr/bin:/bin", "WEBSITE_INSTANCE_ID": "instance-1", "PURVIEW_ACCOUNT_NAME": "contoso",
           "AzureWebJobsStorage": "UseDevelopmentStorage=true"}
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["4", "table", "purview",
                                   "https://lake.dfs.core.windows.net/raw/sales/orders"]
