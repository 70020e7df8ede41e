"""No test module imports another: what several tests share lives in fixtures (conftest.py) or in the tests/support
package (a helper, never in a conftest: tests/unit/test_test_layout.py). Importing a test module runs its
collection-time code again under another name and registers its tests twice when pytest collects it; a helper kept in
a test module also breaks when that test is moved or deleted."""

from __future__ import annotations

from pathlib import Path

from tests.support.module_imports import imported_names
from tests.support.repository import PROJECT_ROOT

TESTS = PROJECT_ROOT / "tests"


def imports_of_test_modules(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, module) for each test module (`test_*.py`) that the file at `path` imports."""
    found = imported_names(path, root)
    return sorted({(line, name) for line, name in found if any(p.startswith("test_") for p in name.split("."))})


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
