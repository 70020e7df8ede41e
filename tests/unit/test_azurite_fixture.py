"""One Azurite per test session: the `azurite` fixture is defined in exactly one place (tests/support/azurite_fixture.py,
registered by tests/conftest.py), because every conftest or test module that imports a session fixture holds a
definition of its own, and pytest starts one emulator per definition."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.repository import PROJECT_ROOT

TESTS = PROJECT_ROOT / "tests"
FIXTURE_MODULE = TESTS / "support" / "azurite_fixture.py"


def definitions_of_the_azurite_fixture(path: Path, root: Path = PROJECT_ROOT) -> list[str]:
    """Where a module defines or imports a fixture named `azurite` ("file:line what")."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and any((alias.asname or alias.name) == "azurite" for alias in node.names):
            found.append(f"{path.relative_to(root)}:{node.lineno} imports it")
        elif isinstance(node, ast.FunctionDef) and node.name == "azurite":
            found.append(f"{path.relative_to(root)}:{node.lineno} defines it")
    return found


def plugins_registered(conftest: Path) -> tuple[str, ...]:
    """The `pytest_plugins` a conftest names (read from its source: no test imports a conftest module)."""
    for node in ast.parse(conftest.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytest_plugins" for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    return ()


def test_the_fixture_is_defined_once_and_registered_for_the_whole_session():
    elsewhere = [
        where
        for path in sorted(TESTS.rglob("*.py"))
        if path != FIXTURE_MODULE
        for where in definitions_of_the_azurite_fixture(path)
    ]
    assert elsewhere == []
    [definition] = definitions_of_the_azurite_fixture(FIXTURE_MODULE)
    assert definition.startswith("tests/support/azurite_fixture.py:") and definition.endswith(" defines it")
    assert "tests.support.azurite_fixture" in plugins_registered(TESTS / "conftest.py")


def test_an_import_of_the_fixture_counts_as_a_definition(tmp_path):
    (tmp_path / "conftest.py").write_text(
        "import pytest\nfrom tests.support.azurite_fixture import azurite  # noqa\n", encoding="utf-8"
    )
    assert definitions_of_the_azurite_fixture(tmp_path / "conftest.py", tmp_path) == ["conftest.py:2 imports it"]
