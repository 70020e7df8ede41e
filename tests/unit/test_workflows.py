"""The CI workflows and the Makefile say what the README says: `make lint` (ruff and mypy), then `make test` on push
and pull request with the toolchains the suite needs, then `make lint-config` on the one rule file; a tag builds the deployment zip and the wheel; `make help` lists every target."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

PROJECT_ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = PROJECT_ROOT / ".github" / "workflows"


def workflow(name: str) -> dict:
    document = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    document["on"] = document.pop(True, document.get("on"))  # YAML 1.1 reads the key `on` as true
    return document


def steps(document: dict) -> list[dict]:
    [job] = document["jobs"].values()
    return job["steps"]


def uses(document: dict, action: str) -> dict:
    [step] = [s for s in steps(document) if s.get("uses", "").startswith(action + "@")]
    return step.get("with", {})


def test_the_test_workflow_runs_the_readme_test_command_on_push_and_pull_request():
    test = workflow("test.yml")
    assert set(test["on"]) == {"push", "pull_request"}
    assert [s["run"] for s in steps(test) if "run" in s] == [
        "scripts/ensure-chromium.sh",
        "make lint",
        "make test",  # README's command unchanged: the tests that need ../shared skip there (tests/conftest.py)
        "make lint-config",
    ]
    assert not any("shared" in str(s.get("with", {})) for s in steps(test))  # no ../shared checked out there
    ci_run = (PROJECT_ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ci_run[-3:] == ["export OL2PURVIEW_REQUIRE_SHARED=1", "make lint", "make test"]  # ../shared required here
    assert "OL2PURVIEW_REQUIRE_SHARED" not in str(test)  # and not on GitHub, which has none
    assert "make test" in (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    [job] = test["jobs"].values()
    assert job["container"]["image"] == "python:3.11-bookworm"  # Python 3.11 and Debian's chromium
    assert job["env"]["CI"] == "true"
    assert uses(test, "actions/setup-node")["node-version"] == "20"
    assert uses(test, "actions/setup-java")["java-version"] == "17"


def test_a_tag_builds_the_deployment_zip_and_the_wheel():
    release = workflow("release.yml")
    assert release["on"] == {"push": {"tags": ["v*"]}}
    runs = [s["run"] for s in steps(release) if "run" in s]
    assert runs[0].startswith("python deploy/package.py --out dist/")
    assert runs[1] == "python -m pip wheel --no-deps --wheel-dir dist ."
    assert uses(release, "actions/setup-python")["python-version"] == "3.11"


def test_make_help_lists_every_target():
    makefile = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")
    phony = set(re.search(r"^\.PHONY:(.*)$", makefile, re.MULTILINE).group(1).split())
    defined = set(re.findall(r"^([a-z][a-z-]*):", makefile, re.MULTILINE))
    assert phony == defined
    done = subprocess.run(
        ["make", "--no-print-directory", "help"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=30
    )
    listed = {line.split()[1] for line in done.stdout.splitlines() if line.startswith("make ")}
    assert listed == defined


def test_the_readme_says_how_to_get_the_commands_on_path_and_they_are_installed_there():
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    assert "`. .venv/bin/activate`" in readme
    pyproject = (PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert (
        'qn-tester = "ol2purview_tools.qn_tester:main"' in pyproject
        and 'ol2purview = "ol2purview_tools.cli:main"' in pyproject
    )
    for command in ("ol2purview", "qn-tester"):
        assert (PROJECT_ROOT / ".venv" / "bin" / command).exists()  # `make venv` put them where activate looks
