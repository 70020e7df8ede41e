"""The wheel (what a Databricks cluster or a Spark driver installs) claims only the project's own top-level names,
carries what an installed connector needs (code, the rules packaged from config/, typedefs, the function app `serve`
runs), and, once installed in a fresh virtual environment and run from an empty folder, uses the packaged rules and
keeps its state in the working directory, not in site-packages (setup.py says how the wheel is laid out)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
import requests

from tests.support.repository import PROJECT_ROOT, repository_copy

# Every name the wheel may put at the top of site-packages: no `tools`, no `config`, no `function_app`.
TOP_LEVEL = ["ol2purview_tools", "olparser"]
ABSOLUTE_TOOLS_IMPORT = re.compile(r"^\s*(from|import)\s+tools(\.|\s)", re.M)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the repository (so that the build leaves no build/ folder in it)."""
    folder = tmp_path_factory.mktemp("wheel")
    source = repository_copy(folder / "source")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "-q", "-w", str(folder)],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return next(folder.glob("ol2purview-*.whl"))


def test_the_wheel_claims_only_the_projects_own_top_level_names(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    dist_info = next(name.split("/")[0] for name in names if name.endswith(".dist-info/METADATA"))
    assert sorted({name.split("/")[0] for name in names} - {dist_info}) == TOP_LEVEL
    assert zipfile.ZipFile(wheel).read(f"{dist_info}/top_level.txt").decode().split() == TOP_LEVEL


def test_the_wheel_carries_the_code_the_rules_the_typedefs_and_the_app(wheel: Path):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "olparser/naming/shipped/OlToPurviewMappings.json",
        "olparser/lineage/typedefs/databricks.json",
        "olparser/lineage/typedefs/spark.json",
        "olparser/lineage/typedefs/openlineage_datasets.json",
        "olparser/contract/event-contract.schema.json",
        "olparser/naming/mappings.schema.json",
        "olparser/lineage/combine.py",
        "olparser/adapters/delivery/archive.py",
        "olparser/adapters/sql/worker.py",
        "ol2purview_tools/spark/spark_job.py",
        "ol2purview_tools/spark/main.py",
        "ol2purview_tools/spark/system_job.py",
        "ol2purview_tools/catalog/static/app.js",
        "ol2purview_tools/app/function_app.py",
        "ol2purview_tools/app/host.json",
    } <= names
    # the one rule file, packaged as it is committed
    rules = zipfile.ZipFile(wheel).read("olparser/naming/shipped/OlToPurviewMappings.json")
    assert rules == (PROJECT_ROOT / "config" / "OlToPurviewMappings.json").read_bytes()
    # the repository's own things stay out: its config/ folder, the docs generator, tests, benchmarks
    assert [
        name for name in names if name.startswith(("config/", "tools/", "tests/", "bench/", "ol2purview_tools/docs/"))
    ] == []


def test_the_entry_points_and_the_tools_code_use_the_wheels_name(wheel: Path):
    archive = zipfile.ZipFile(wheel)
    entry_points = archive.read(next(n for n in archive.namelist() if n.endswith("entry_points.txt"))).decode()
    assert sorted(line.strip() for line in entry_points.splitlines() if " = " in line) == [
        "ol2purview = ol2purview_tools.cli:main",
        "qn-tester = ol2purview_tools.qn_tester:main",
    ]
    # tools/ modules import each other relatively; only the spark-submit script falls back to the repository's name
    absolute = [
        name
        for name in archive.namelist()
        if name.endswith(".py") and ABSOLUTE_TOOLS_IMPORT.search(archive.read(name).decode())
    ]
    assert absolute == ["ol2purview_tools/spark/main.py"]


# --- installed in a fresh virtual environment ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment (no pip, no system site-packages) with the wheel installed; its dependencies come
    from this test run's environment through a .pth line (no download, and not the project's editable install,
    whose own .pth file such a line does not run). Returns the environment's bin folder."""
    venv = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(purelib) / "ol2purview_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv / "bin"


def _clean_env(home: Path) -> dict[str, str]:
    """The environment of a user's shell: none of the settings the test run sets, no PYTHONPATH."""
    dropped = (
        "OL_TO_PURVIEW_MAPPINGS_PATH",
        "OlToPurviewMappings",
        "OL2PURVIEW_DATA_DIR",
        "PYTHONPATH",
        "AzureWebJobsStorage",
        "ATLAS_ENDPOINT",
        "PURVIEW_ACCOUNT_NAME",
        "PURVIEW_ENDPOINT",
        "VIRTUAL_ENV",
    )
    return {**{k: v for k, v in os.environ.items() if k not in dropped}, "HOME": str(home), "PYTHONUNBUFFERED": "1"}


def _site_packages(bin_dir: Path) -> Path:
    return Path(
        subprocess.run(
            [
                str(bin_dir / "python"),
                "-c",
                "import olparser, pathlib; print(pathlib.Path(olparser.__file__).resolve().parent.parent)",
            ],
            capture_output=True,
            text=True,
            check=True,
            cwd=bin_dir,
        ).stdout.strip()
    )


@pytest.mark.slow
def test_installed_qn_tester_in_an_empty_folder_uses_the_packaged_rules(installed: Path, tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()

    def qn_tester(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(installed / "qn-tester"), *args],
            cwd=empty,
            env=_clean_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
        )

    done = qn_tester("lint")  # shown relative to the folder above olparser/: site-packages here
    packaged = "olparser/naming/shipped/OlToPurviewMappings.json"
    assert (done.returncode, done.stdout) == (0, f"{packaged}: no problems found\n"), done.stderr[-2000:]
    done = qn_tester("--namespace", "abfss://raw@lake.dfs.core.windows.net", "--name", "/sales")
    assert (done.returncode, done.stderr) == (0, f"qn-tester: rules from {packaged} (55 rules)\n")
    assert sorted(p.name for p in empty.iterdir()) == []  # nothing written where it ran


@pytest.mark.slow
def test_installed_serve_in_an_empty_folder_uses_the_packaged_rules_and_keeps_state_there(
    installed: Path, tmp_path: Path
):
    empty = tmp_path / "empty"
    empty.mkdir()
    master_key = "test-master-key-0123456789"
    process = subprocess.Popen(
        [
            str(installed / "ol2purview"),
            "serve",
            "--port",
            "0",
            "--catalog-port",
            "0",
            "--storage",
            "embedded",
            f"--master-key={master_key}",
        ],
        cwd=empty,
        env=_clean_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines: list[str] = []
        for line in process.stdout:
            lines.append(line)
            if line.startswith("ready:"):
                break
        ready = next((line for line in lines if line.startswith("ready:")), None)
        assert ready is not None, "".join(lines)
        url = ready.split()[1].rstrip("/")
        status = requests.get(
            f"{url}/admin/ol2purview/status", headers={"x-functions-key": master_key}, timeout=30
        ).json()
    finally:
        process.terminate()
        process.wait(timeout=60)
    # the path the status shows is relative to the folder above olparser/: site-packages here
    assert (status["rules"]["ok"], status["rules"]["path"]) == (
        True,
        "olparser/naming/shipped/OlToPurviewMappings.json",
    )
    assert sorted(p.name for p in empty.iterdir()) == [".data"]
    site = _site_packages(installed)
    assert [p for p in site.rglob(".data")] == []
    assert (empty / ".data" / "host-keys.json").is_file()


def test_serve_in_the_repository_runs_its_function_app_also_through_the_editable_install(tmp_path: Path):
    """`make run` starts the editable install's `ol2purview`, which imports tools/ as ol2purview_tools."""
    shown = subprocess.run(
        [sys.executable, "-c", "import ol2purview_tools.functions_host.cli as serve, tools;print(serve.DEFAULT_APP)"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (shown.returncode, shown.stdout) == (0, f"{PROJECT_ROOT / 'function_app.py'}\n"), shown.stderr[-2000:]
