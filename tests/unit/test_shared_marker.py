"""The `shared` marker (tests/shared_marker.py): the tests that need ../shared are found from the source, and a copy
of the repository with no ../shared next to it (a clone from GitHub, which the workflow tests) collects without an
error and deselects exactly them with `-m "not shared"`, saying how many."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.shared_marker import reaching
from tests.support.repository import repository_copy


def test_the_names_that_reach_shared_are_found_across_modules():
    helpers = reaching("tests.e2e.conftest")
    assert {"SHARED_OPENLINEAGE", "real_event_files", "sequence_folders"} <= helpers
    assert "start_serve" not in helpers and "drain_queue" not in helpers
    assert {"EVENTS", "ACCELERATOR_EVENT"} <= reaching("tests.e2e.lineage_helpers")  # imported SHARED_OPENLINEAGE
    assert "REAL_SOURCES" in reaching("tests.property.scenarios")
    assert "test_the_quickstart_runs_as_written_on_the_repository_alone" not in reaching("tests.e2e.test_readme")


def test_a_copy_without_shared_collects_and_deselects_the_marked_tests(tmp_path):
    root = repository_copy(tmp_path / "ol2purview")
    assert not (tmp_path / "shared").exists()
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "-m",
            "not shared",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    marked = re.search(
        r"^tests that need \.\./shared \(marker `shared`\): (\d+), deselected \(-m \"not shared\"\)$", done.stdout, re.M
    )
    counts = re.search(r"^(\d+)/(\d+) tests collected \((\d+) deselected\)", done.stdout, re.M)
    assert marked and counts, done.stdout[-2000:]
    assert int(marked.group(1)) == int(counts.group(3)) > 100
    assert "error" not in done.stdout.splitlines()[-1]
    collected = {line.split("::")[0] for line in done.stdout.splitlines() if "::" in line}
    assert "tests/e2e/test_readme.py" in collected  # the Quickstart test needs no ../shared


pytestmark = pytest.mark.slow
