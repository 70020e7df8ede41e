"""The package Azure receives (the zip `deploy/package.py` builds from everything `.funcignore` does not leave out)
works on its own: it imports without the local tools, the tests or `../shared`, and it carries the mapping rules and
typedefs it loads."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from deploy.package import build_zip
from tests.support.rules import MAPPINGS_PATH

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def _build_zip(out: Path) -> list[Path]:
    return build_zip(out)


def _deployed_files(folder: Path) -> Path:
    """Build the deployment zip in `folder` and unpack it into `folder/site`, which is returned."""
    _build_zip(folder / "package.zip")
    with zipfile.ZipFile(folder / "package.zip") as package:
        package.extractall(folder / "site")
    return folder / "site"


def test_the_deployed_package_is_exactly_the_function_and_its_core(tmp_path):
    site = _deployed_files(tmp_path)
    assert sorted(p.name for p in site.iterdir()) == [
        "config",
        "function_app.py",
        "host.json",
        "olparser",
        "requirements.txt",
    ]


def test_the_deployed_package_imports_and_builds_its_parts_without_tools_tests_or_shared(tmp_path):
    site = _deployed_files(tmp_path)
    rules = site / "config" / "OlToPurviewMappings.json"  # where the deployed app looks for its rules by itself
    assert rules.is_file()
    assert rules.read_bytes() == MAPPINGS_PATH.read_bytes()  # the one rule file, deployed as committed
    script = (
        "import sys\n"
        "sys.path[:] = [p for p in sys.path if p not in ('', %r)]\n"
        "sys.path.insert(0, %r)\n"
        "sys.modules['tools'] = sys.modules['tests'] = None  # importing either now fails\n"
        "import function_app\n"
        "from olparser.adapters.runtime import process_runtime\n"
        "rt = process_runtime()\n"
        "import olparser\n"
        "assert olparser.__file__.startswith(%r), olparser.__file__\n"
        "from olparser.resolution.resource_sets import ResourceSetRules, resource_set_names\n"
        "print(len(function_app.app.get_functions()), rt.settings.run_state_store, rt.catalog_target().kind,\n"
        "      rt.engine().map('abfss://raw@lake.dfs.core.windows.net', '/sales/orders').qualified_name,\n"
        "      *resource_set_names('https://lake.dfs.core.windows.net/raw/sales', ResourceSetRules.default()))\n"
    ) % (str(PROJECT_ROOT), str(site), str(site))
    env = {
        "PATH": "/usr/bin:/bin",
        "WEBSITE_INSTANCE_ID": "instance-1",
        "PURVIEW_ACCOUNT_NAME": "contoso",
        "AzureWebJobsStorage": "UseDevelopmentStorage=true",
    }
    done = subprocess.run([sys.executable, "-c", script], cwd=site, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == [
        "9",
        "table",
        "purview",  # 9 functions: the re-link timer, two history endpoints
        "https://lake.dfs.core.windows.net/raw/sales/orders",
        "https://lake.dfs.core.windows.net/raw/sales/{SparkPartitions}",
    ]


def test_the_zip_is_the_same_for_the_same_tree(tmp_path):
    first, second = tmp_path / "a.zip", tmp_path / "b.zip"
    files = _build_zip(first)
    _build_zip(second)
    assert first.read_bytes() == second.read_bytes()
    assert all(not part.startswith(".") and part != "__pycache__" for path in files for part in path.parts)
    assert {path.parts[0] for path in files} == {
        "config",
        "function_app.py",
        "host.json",
        "olparser",
        "requirements.txt",
    }
