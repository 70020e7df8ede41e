"""Helpers live in tests/support, never in a conftest.py: a conftest holds fixtures, hooks and pytest's plugin wiring
only, and no module imports from one. A conftest is loaded by pytest as a plugin, under a name of its own choosing;
importing it again from a test runs it a second time as another module (its hooks and module state twice, its
fixtures seen as plain functions), and a helper found there is tied to the folder that conftest serves.

Both checks read the syntax tree of every module under tests/ and name the offenders: each import of a conftest
module (absolute, relative, or `from tests import conftest`), and each public name a conftest defines that is not a
fixture or a hook (a name starting with `_` serves the conftest's own hooks and fixtures)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.module_imports import imported_names
from tests.support.repository import PROJECT_ROOT

TESTS = PROJECT_ROOT / "tests"
WIRING = frozenset({"pytest_plugins", "pytestmark", "collect_ignore", "collect_ignore_glob"})


def conftest_imports(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, name) for each import, in the file at `path`, of a conftest module or of a name from one."""
    found = imported_names(path, root)
    return sorted({(line, name) for line, name in found if "conftest" in name.split(".")})


def _is_fixture(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in ("fixture", "yield_fixture")


def helpers_in_conftest(source: str) -> list[tuple[int, str]]:
    """(line, name) of each public module-level name a conftest defines that is not a fixture (decorated with
    pytest.fixture), a hook (`pytest_*`) or plugin wiring (`pytest_plugins`, `pytestmark`, `collect_ignore`)."""
    found = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not node.name.startswith(("_", "pytest_")) and not any(map(_is_fixture, node.decorator_list)):
                found.append((node.lineno, node.name))
        elif isinstance(node, ast.ClassDef):
            found += [(node.lineno, node.name)] if not node.name.startswith("_") else []
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)]
            found += [(node.lineno, name) for name in names if not name.startswith("_") and name not in WIRING]
    return found


def module_paths() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "sample_app" not in p.parts)


def test_no_module_imports_from_a_conftest():
    found = {
        str(path.relative_to(PROJECT_ROOT)): [f"line {line}: {name}" for line, name in imported]
        for path in module_paths()
        if (imported := conftest_imports(path, PROJECT_ROOT))
    }
    assert found == {}, "import the helper from tests/support (move it there from the conftest)"


def test_a_conftest_holds_fixtures_hooks_and_wiring_only():
    found = {
        str(path.relative_to(PROJECT_ROOT)): [f"line {line}: {name}" for line, name in helpers]
        for path in sorted(TESTS.rglob("conftest.py"))
        if (helpers := helpers_in_conftest(path.read_text(encoding="utf-8")))
    }
    assert found == {}, "move these helpers into a module of tests/support, and import them from there"


def test_every_form_of_conftest_import_is_seen(tmp_path: Path):
    package = tmp_path / "tests" / "unit"
    package.mkdir(parents=True)
    module = package / "test_b.py"
    module.write_text(
        "import tests.conftest\nfrom tests.e2e.conftest import start_serve\nfrom tests import conftest\n"
        "from .conftest import rule\nfrom . import conftest as c\nfrom tests.support.rules import X\n"
        "def f():\n    from ..conftest import T0\n",
        encoding="utf-8",
    )
    assert conftest_imports(module, tmp_path) == [
        (1, "tests.conftest"),
        (2, "tests.e2e.conftest"),
        (2, "tests.e2e.conftest.start_serve"),
        (3, "tests.conftest"),
        (4, "tests.unit.conftest"),
        (4, "tests.unit.conftest.rule"),
        (5, "tests.unit.conftest"),
        (8, "tests.conftest"),
        (8, "tests.conftest.T0"),
    ]


@pytest.mark.parametrize(
    "source, expected",
    [
        ("import pytest\n@pytest.fixture\ndef port():\n    return 1\n", []),
        ("from pytest import fixture\n@fixture(scope='session')\ndef port():\n    return 1\n", []),
        ("def pytest_collection_modifyitems(config, items):\n    pass\n", []),
        ("pytest_plugins = ('tests.support.azurite_fixture',)\n_SKIPPED: list[str] = []\n", []),
        ("def _record(report):\n    pass\nclass _State:\n    pass\n", []),  # the conftest's own
        ("def start_serve():\n    pass\n", [(1, "start_serve")]),
        ("class FakeEngine:\n    pass\n", [(1, "FakeEngine")]),
        ("USER, PASSWORD = 'u', 'p'\nT0: float = 1.0\n", [(1, "USER"), (1, "PASSWORD"), (2, "T0")]),
    ],
)
def test_the_check_finds_helpers_in_a_conftest_and_only_them(source, expected):
    assert helpers_in_conftest(source) == expected
