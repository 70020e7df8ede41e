"""Tests use their own copy of the shipped rules (tests/rules), never config/OlToPurviewMappings.json, which users edit:
the test process refuses to open the user's file however a test gets there (and fails a test that swallowed the
refusal), and the processes tests start are pointed at the copy. No test here opens the user's file: the refusal comes
before the file is opened, so these tests pass whatever the file holds, even when it is missing or invalid."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from olparser.naming import MappingEngine
from olparser.adapters.runtime import Runtime
from olparser.settings import DEFAULT_MAPPINGS_PATH, Settings
from tests import rules
from tests.conftest import PROJECT_ROOT
from tests.rules import MAPPINGS_PATH, UserRulesFileRead, user_rules_file_allowed
from tests.unit.test_strict_mode import run_pytest
from tools.spark.job import BackfillJob

USER_FILE = str(DEFAULT_MAPPINGS_PATH)


def test_the_tests_rules_are_the_shipped_rules_package_data_not_the_users_file():
    engine = MappingEngine.from_path(MAPPINGS_PATH)
    names = [rule.name for rule in engine.rules]
    assert (len(names), names[:3], names[-1]) == (
        55, ["adlsGen2BlobHostSubfolder", "adlsGen2BlobHostRoot", "adlsGen2BlobHost"], "snowflake")
    assert MAPPINGS_PATH == PROJECT_ROOT / "olparser" / "naming" / "shipped" / "OlToPurviewMappings.json"
    assert MAPPINGS_PATH != DEFAULT_MAPPINGS_PATH
    result = engine.map("abfss://raw@lake.dfs.core.windows.net", "/sales/orders")
    assert (result.qualified_name, result.purview_type) == (
        "https://lake.dfs.core.windows.net/raw/sales/orders", "azure_datalake_gen2_path")


def _runtime_engine(tmp_path: Path) -> Any:
    runtime = Runtime(Settings(data_dir=tmp_path))  # Settings() never reads the environment: the user's file
    try:
        return runtime.engine()
    finally:
        runtime.close()


@pytest.mark.parametrize("load, opened_as", [
    (lambda tmp_path: MappingEngine.from_path(DEFAULT_MAPPINGS_PATH), USER_FILE),
    (lambda tmp_path: MappingEngine.from_settings(Settings()), USER_FILE),
    (_runtime_engine, USER_FILE),
    (lambda tmp_path: BackfillJob.create(Settings()), USER_FILE),
    (lambda tmp_path: DEFAULT_MAPPINGS_PATH.read_text(encoding="utf-8"), USER_FILE),
    (lambda tmp_path: open(Path("config") / "OlToPurviewMappings.json", "rb"), "config/OlToPurviewMappings.json"),
], ids=["from_path", "from_settings", "runtime", "backfill_job", "read_text", "relative_path"])
def test_opening_the_users_rule_file_in_a_test_fails_naming_the_rule_and_the_copy(
        load: Callable[[Path], Any], opened_as: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(PROJECT_ROOT)
    with pytest.raises(UserRulesFileRead) as refused:
        load(tmp_path)
    assert str(refused.value) == (
        f"a test opened {opened_as}, the mapping-rule file users edit. Team rule: tests use their own copy of the "
        f"shipped rules, never the file users edit. Load {MAPPINGS_PATH} instead (tests.rules.MAPPINGS_PATH: "
        f"MappingEngine.from_path(MAPPINGS_PATH), Settings(mappings_path=MAPPINGS_PATH, ...); a child process gets "
        f"OL_TO_PURVIEW_MAPPINGS_PATH={MAPPINGS_PATH}).")
    assert rules.take_reads() == [opened_as]  # taken, so that the root conftest does not fail this test as well


GUARDED_SUITE = '''
from olparser.naming import MappingEngine
from olparser.settings import DEFAULT_MAPPINGS_PATH, Settings
from tests.rules import MAPPINGS_PATH


def test_loads_the_default_settings_rules():
    MappingEngine.from_settings(Settings())


def test_swallows_the_refusal():
    try:
        DEFAULT_MAPPINGS_PATH.read_bytes()
    except Exception:
        pass


def test_loads_the_copy():
    assert len(MappingEngine.from_path(MAPPINGS_PATH).rules) == 55
'''


def test_a_test_that_opened_the_users_file_fails_even_when_it_swallowed_the_refusal(tmp_path: Path) -> None:
    (tmp_path / "test_guarded.py").write_text(GUARDED_SUITE)
    done = run_pytest(tmp_path, {})
    assert done.returncode == 1, done.stdout + done.stderr
    summary = [line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    assert [(line.split()[0], line.split(" - ")[0].rsplit("/", 1)[-1]) for line in summary] == [
        ("FAILED", "test_guarded.py::test_loads_the_default_settings_rules"),
        ("FAILED", "test_guarded.py::test_swallows_the_refusal")]
    assert done.stdout.count(rules.refusal(USER_FILE)) == 2  # the error raised, and the one caught
    assert done.stdout.splitlines()[-1].startswith("2 failed, 1 passed")


def test_processes_the_tests_start_read_the_copy() -> None:
    assert (os.environ["OL_TO_PURVIEW_MAPPINGS_PATH"], "OlToPurviewMappings" in os.environ) == (str(MAPPINGS_PATH),
                                                                                                 False)
    done = subprocess.run([sys.executable, "-c", "from olparser.settings import Settings\n"
                           "print(Settings.from_env().mappings_path)"],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, f"{MAPPINGS_PATH}\n"), done.stderr


def test_packaging_may_open_the_users_file_on_its_own_thread_only() -> None:
    opening = ("open", (USER_FILE, "rb", 0))  # what the audit hook sees when the file is opened: it is not opened here
    refused_elsewhere: list[BaseException] = []

    def other_thread() -> None:
        try:
            rules.audit_hook(*opening)
        except UserRulesFileRead as exc:
            refused_elsewhere.append(exc)

    with user_rules_file_allowed("a test of the allowance"):
        rules.audit_hook(*opening)  # allowed: no error
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
    assert len(refused_elsewhere) == 1
    with pytest.raises(UserRulesFileRead):
        rules.audit_hook(*opening)  # the block is over
    assert rules.take_reads() == [USER_FILE, USER_FILE]
    with pytest.raises(ValueError, match="say why"), user_rules_file_allowed(" "):
        pass
