"""Strict mode (`make test`, CI): a skipped test fails the run and is listed; by hand a skip stays a skip.

Each case runs pytest in a subprocess on a small test folder with tests/conftest.py loaded as a plugin, so the hooks
under test are the real ones.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.azurite_fixture import require_azurite
from tests.support.repository import PROJECT_ROOT
from tests.support.strict_mode import STRICT_ENV, skips_are_failures

SKIPPING_TESTS = '''
import pytest

def test_runs():
    assert 1 + 1 == 2

def test_needs_a_browser():
    pytest.skip("chromium is not installed")
'''
SKIPPING_MODULE = '''
import pytest
pytest.skip("no emulator here", allow_module_level=True)

def test_never_collected():
    pass
'''


def run_pytest(folder: Path, env_changes: dict[str, str]) -> subprocess.CompletedProcess:
    env = {name: value for name, value in os.environ.items() if name not in ("CI", STRICT_ENV)}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "tests.conftest",
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
        "-q",
        "--rootdir",
        str(folder),
        str(folder),
    ]
    return subprocess.run(
        command, cwd=PROJECT_ROOT, env={**env, **env_changes}, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "test_skip_in_test.py").write_text(SKIPPING_TESTS)
    (tmp_path / "test_skip_module.py").write_text(SKIPPING_MODULE)
    return tmp_path


@pytest.mark.parametrize("env_changes", [{STRICT_ENV: "1"}, {"CI": "true"}])
def test_a_skip_fails_the_run_in_strict_mode(suite: Path, env_changes: dict[str, str]) -> None:
    done = run_pytest(suite, env_changes)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if "2 skipped, which fails the run" in line)
    assert sorted(lines[header + 1 : header + 3]) == [
        "test_skip_in_test.py::test_needs_a_browser: Skipped: chromium is not installed",
        "test_skip_module.py: Skipped: no emulator here",
    ]
    assert lines[-1].startswith("1 passed, 2 skipped")


def test_by_hand_a_skip_stays_a_skip(suite: Path) -> None:
    done = run_pytest(suite, {})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "which fails the run" not in done.stdout
    assert done.stdout.splitlines()[-1].startswith("1 passed, 2 skipped")


@pytest.mark.parametrize(
    "env, strict",
    [
        ({}, False),
        ({"CI": "false"}, False),
        ({STRICT_ENV: "0"}, False),
        ({"CI": "true"}, True),
        ({"CI": " TRUE "}, True),
        ({STRICT_ENV: "1"}, True),
    ],
)
def test_which_environments_are_strict(env: dict[str, str], strict: bool) -> None:
    assert skips_are_failures(env) is strict


def test_missing_azurite_fails_under_make_test(tmp_path: Path) -> None:
    with pytest.raises(pytest.fail.Exception) as failed:
        require_azurite(tmp_path / "azurite", env={STRICT_ENV: "1"})
    assert str(failed.value) == (
        f"{STRICT_ENV}=1 (make test) and Azurite is not installed at {tmp_path / 'azurite'}: "
        f"run `npm ci` (or `make node`) in {PROJECT_ROOT}"
    )
