"""The `shared` marker: a test that needs the shared reference material (`../shared`, which a clone from GitHub does
not have) is marked `shared` at collection, so that `-m "not shared"` deselects exactly those (the GitHub workflow
does, .github/workflows/test.yml) and the run says how many (`pytest_terminal_summary` in tests/conftest.py).

Which tests need it is read from the source, not kept by hand: a name *reaches* ../shared when it is one of the
roots (`SHARED`, `SHARED_OPENLINEAGE`, the `shared_dir` fixture, a path `<something>.parent / "shared"`) or when its definition
(a module-level function, class or assignment) uses a name that does, in its own module or imported from another
module of this project; a test needs ../shared when its function reaches it, or one of its fixtures (and theirs)
does. Module-level reads are written so that a module still collects without ../shared (its shared-built lists are
empty): the marked tests are deselected, the others run.
"""

from __future__ import annotations

import ast
import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import pytest

MARKER = "shared"
ROOTS = frozenset({"SHARED", "SHARED_OPENLINEAGE", "shared_dir"})
PROJECT_PACKAGES = ("tests", "tools", "bench")


def _used_names(node: ast.AST) -> set[str]:
    """Names a definition uses (loads, attribute roots, fixture parameters), and `ROOTS` for a "shared" segment."""
    used: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            used.add(child.id)
        elif isinstance(child, ast.arg):
            used.add(child.arg)  # a fixture named as a parameter
        elif (
            isinstance(child, ast.BinOp)
            and isinstance(child.op, ast.Div)
            and isinstance(child.right, ast.Constant)
            and child.right.value == "shared"
            and any(isinstance(n, ast.Attribute) and n.attr in ("parent", "parents") for n in ast.walk(child.left))
        ):
            used.add("SHARED")  # `PROJECT_ROOT.parent / "shared"`, `Path(__file__).parents[2].parent / "shared"`
    return used


def _definitions(tree: ast.Module) -> dict[str, set[str]]:
    """Module-level name -> the names its definition uses (a class: all its methods)."""
    defined: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.setdefault(node.name, set()).update(_used_names(node))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                    defined.setdefault(name, set()).update(_used_names(node.value) if node.value else set())
    return defined


def _imports(tree: ast.Module, module: str) -> dict[str, tuple[str, str]]:
    """Local name -> (project module, its name) for `from X import a as b` (absolute or relative) of this project."""
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        source = node.module or ""
        if node.level:
            base = module.split(".")[: -node.level]
            source = ".".join(base + ([source] if source else []))
        if source.split(".")[0] in PROJECT_PACKAGES:
            for alias in node.names:
                found[alias.asname or alias.name] = (source, alias.name)
    return found


@lru_cache(maxsize=None)
def _tree(module: str) -> ast.Module | None:
    spec = importlib.util.find_spec(module) if module else None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return ast.parse(Path(spec.origin).read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def reaching(module: str) -> frozenset[str]:
    """The module-level names of `module` that reach ../shared (to a fixed point, across project imports)."""
    tree = _tree(module)
    if tree is None:
        return frozenset()
    definitions = _definitions(tree)
    imported = _imports(tree, module)
    reached = set(ROOTS)
    for local, (source, name) in imported.items():
        if source != module and (name in ROOTS or name in reaching(source)):
            reached.add(local)
    changed = True
    while changed:
        changed = False
        for name, used in definitions.items():
            if name not in reached and used & reached:
                reached.add(name)
                changed = True
    return frozenset(reached)


def _fixture_defs(item: pytest.Item) -> Iterable[Any]:
    info = getattr(item, "_fixtureinfo", None)
    for definitions in info.name2fixturedefs.values() if info else ():
        yield from definitions


def needs_shared(item: pytest.Item) -> bool:
    function = getattr(item, "function", None)
    if function is None:
        return False
    module = function.__module__
    owner = getattr(item, "cls", None)
    name = owner.__name__ if owner is not None else function.__name__
    if name in reaching(module):
        return True
    for definition in _fixture_defs(item):
        func = getattr(definition, "func", None)
        if func is not None and func.__name__ in reaching(func.__module__):
            return True
        if definition.argname in ROOTS:
            return True
    return False


def mark(items: list[pytest.Item]) -> int:
    """Mark the items that need ../shared; how many."""
    count = 0
    for item in items:
        if needs_shared(item):
            item.add_marker(MARKER)
            count += 1
    return count
