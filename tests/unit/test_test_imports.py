"""No test module imports another: what several tests share lives in fixtures (conftest.py) or in the tests/support
package. Importing a test module runs its collection-time code again under another name and registers its tests
twice when pytest collects it; a helper kept in a test module also breaks when that test is moved or deleted."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.repository import PROJECT_ROOT

TESTS = PROJECT_ROOT / "tests"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(module: str | None, level: int, importer: str, is_package: bool) -> str:
    """The absolute name of `from <.. module> import` in module `importer`."""
    if not level:
        return module or ""
    base = importer.split(".")
    base = base[: len(base) - level + (1 if is_package else 0)]
    return ".".join([*base, *([module] if module else [])])


def imports_of_test_modules(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, module) for each test module (`test_*.py`) that the file at `path` imports."""
    importer = _module_name(path, root)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node.module, node.level, importer, path.name == "__init__.py")
            names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        else:
            continue
        found += [(node.lineno, name) for name in names if any(part.startswith("test_") for part in name.split("."))]
    return sorted(set(found))


def test_no_test_module_imports_another():
    found = {
        str(path.relative_to(PROJECT_ROOT)): imported
        for path in sorted(TESTS.rglob("*.py"))
        if (imported := imports_of_test_modules(path, PROJECT_ROOT))
    }
    assert found == {}, "move what is shared into tests/support (or a fixture in conftest.py)"


def test_every_form_of_import_is_seen(tmp_path: Path):
    package = tmp_path / "tests" / "unit"
    package.mkdir(parents=True)
    module = package / "test_b.py"
    module.write_text(
        "import tests.unit.test_a\nfrom tests.unit.test_a import helper\nfrom tests.unit import test_a\n"
        "from .test_a import helper\nfrom . import test_a as a\nfrom tests.support.rules import X\n"
        "from .conftest import rule\n",
        encoding="utf-8",
    )
    assert imports_of_test_modules(module, tmp_path) == [
        (1, "tests.unit.test_a"),
        (2, "tests.unit.test_a"),
        (2, "tests.unit.test_a.helper"),
        (3, "tests.unit.test_a"),
        (4, "tests.unit.test_a"),
        (4, "tests.unit.test_a.helper"),
        (5, "tests.unit.test_a"),
    ]
