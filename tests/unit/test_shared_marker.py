"""The `shared` marker (tests/shared_marker.py): the tests that need ../shared are found from the source, and on a copy
of the repository with no ../shared next to it (a clone from GitHub, which the workflow tests) README's fast test
command passes, those tests skipped and counted in one line; `.ci/run`'s OL2PURVIEW_REQUIRE_SHARED=1 makes the absence
an error."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.shared_marker import reaching
from tests.support.repository import lone_copy, repository_copy


def test_the_names_that_reach_shared_are_found_across_modules():
    helpers = reaching("tests.support.shared_events")
    assert {"SHARED_OPENLINEAGE", "real_event_files", "sequence_folders", "load_sequence"} <= helpers
    serving = reaching("tests.support.serves")
    assert "start_serve_on_store" not in serving and "drain_queue" not in serving
    assert {"EVENTS", "ACCELERATOR_EVENT"} <= reaching("tests.e2e.lineage_helpers")  # imported SHARED_OPENLINEAGE
    assert "REAL_SOURCES" in reaching("tests.property.scenarios")
    assert "test_the_quickstart_runs_as_written_on_the_repository_alone" not in reaching("tests.e2e.test_readme")


def clone_environment(root, **changes: str) -> dict[str, str]:
    """A user's shell in the clone (GitHub's: CI=true), none of this test run's settings."""
    dropped = ("OL_TO_PURVIEW_MAPPINGS_PATH", "OlToPurviewMappings", "PYTEST_XDIST_WORKER", "PYTEST_CURRENT_TEST")
    # run from `make test` (as .ci/run does), the outer make's settings would make the inner one print
    # "Leaving directory" after pytest's summary; a user's shell has none of them
    dropped += ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "MAKE_TERMOUT", "MAKE_TERMERR")
    env = {k: v for k, v in os.environ.items() if k not in dropped and not k.startswith("PYTEST_XDIST")}
    return {**env, "PYTHONPATH": str(root), "CI": "true", **changes}


def as_cloned(root) -> None:
    """The copy's files as one commit of a git repository of its own, as a clone has them (tests read `git ls-files`);
    and `ol2purview_tools`, the name the editable install of `make venv` gives tools/, in the copy's .venv."""
    identity = ["-c", "user.name=clone", "-c", "user.email=clone@example.invalid", "-c", "commit.gpgsign=false"]
    for command in (["init", "-q"], ["add", "-A"], [*identity, "commit", "-q", "-m", "clone"]):
        subprocess.run(["git", *command], cwd=root, check=True, capture_output=True, timeout=120)
    site = next((root / ".venv" / "lib").glob("python*/site-packages"))
    (site / "ol2purview_tools").symlink_to(root / "tools")


@pytest.mark.timeout(1800)  # the whole fast tier runs inside it (2 min alone on 2 cores; longer beside the suite)
def test_readmes_fast_test_command_passes_on_a_clone_without_shared_and_says_how_many_skipped(tmp_path):
    """Issue 43: on a clone from GitHub `make test-fast` ended with 70 failed and 19 errors. Now the tests that need
    ../shared skip (strict mode, CI=true, allows exactly those) and one line says how many and why."""
    root = lone_copy(tmp_path)
    assert not (tmp_path / "shared").exists()
    as_cloned(root)
    env = clone_environment(root)
    env.pop("OL2PURVIEW_REQUIRE_SHARED", None)
    done = subprocess.run(
        ["make", "test-fast", "PYTEST_ARGS=-p no:randomly -q"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    line = re.search(
        r"^tests that need \.\./shared \(marker `shared`\): (\d+) skipped, because (.*) is missing \(a clone from "
        r"GitHub has none; \.ci/run requires it\)$",
        done.stdout,
        re.M,
    )
    last = [row for row in done.stdout.splitlines() if re.match(r"^\d+ passed", row)][-1:]
    summary = re.search(r"^(\d+) passed, (\d+) skipped", last[0]) if last else None
    assert line and summary, done.stdout[-3000:]
    assert line.group(2) == str((tmp_path / "shared").resolve())
    assert int(line.group(1)) == int(summary.group(2)) > 50  # every skip is one of them
    assert "failed" not in last[0] and "error" not in last[0]


def test_ci_run_requires_shared_by_its_own_variable(tmp_path):
    root = repository_copy(tmp_path / "ol2purview")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/unit/test_workflows.py"],
        cwd=root,
        env=clone_environment(root, OL2PURVIEW_REQUIRE_SHARED="1"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert (
        f"ERROR: OL2PURVIEW_REQUIRE_SHARED=1, but the shared reference material is missing at {tmp_path / 'shared'}"
        in done.stderr
    )


pytestmark = pytest.mark.slow
