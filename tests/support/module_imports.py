"""What a module of the tests imports, read from its syntax tree: for the layout checks (no test module imports
another, tests/unit/test_test_imports.py; nothing imports a conftest, tests/unit/test_test_layout.py)."""

from __future__ import annotations

import ast
from pathlib import Path


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def absolute(module: str | None, level: int, importer: str, is_package: bool) -> str:
    """The absolute name of `from <.. module> import` in module `importer`."""
    if not level:
        return module or ""
    base = importer.split(".")
    base = base[: len(base) - level + (1 if is_package else 0)]
    return ".".join([*base, *([module] if module else [])])


def imported_names(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, name) for everything the file at `path` imports, at any depth: `import a.b` gives `a.b`; `from a import
    b` gives `a` and `a.b` (b may be a module or a name in it); relative imports are made absolute."""
    importer = module_name(path, root)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = absolute(node.module, node.level, importer, path.name == "__init__.py")
            names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        else:
            continue
        found += [(node.lineno, name) for name in names]
    return found
