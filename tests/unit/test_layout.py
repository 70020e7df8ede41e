"""The layout tells the truth: the import graph, read from the source, has no circles; the pure core (olparser outside
olparser/adapters) imports nothing from the adapters, and olparser imports nothing from tools (tools use olparser,
never the reverse); bench imports nothing from tests; no module imports another package's private names (`_name`) or
private modules; tools/ modules import each other relatively, since the wheel installs tools/ as `ol2purview_tools`
(setup.py). Imports under `if TYPE_CHECKING:` are annotations only and are not counted. The docstrings of olparser,
tools and bench name only files, folders, modules and module names that exist. Neither the core nor the adapters
import the orchestration (olparser/pipeline/), lazily or for annotations only, but for the composition root."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.support.repository import PROJECT_ROOT

PACKAGES = ("olparser", "tools", "bench")
ADAPTERS = "olparser.adapters"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PROJECT_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, package: str, *, annotations: bool = False) -> set[str]:
    """Every module `tree` imports (at any depth, functions included), as absolute names; with `annotations`, those
    under `if TYPE_CHECKING:` too."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not annotations:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            for alias in node.names:  # `from package import module` depends on the module, not the package
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


FILES = {_module_name(p): p for name in PACKAGES for p in (PROJECT_ROOT / name).rglob("*.py")}
MODULES = frozenset(FILES)


def _package_of(module: str) -> str:
    return module if module in FILES and FILES[module].name == "__init__.py" else module.rpartition(".")[0]


def private_imports(tree: ast.AST, package: str) -> list[str]:
    """`module -> name` for each private name (`_name`, not `__dunder__`) or private module imported from a package
    other than `package`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            pairs = [(alias.name, alias.name.rpartition(".")[2]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            pairs = [(base, alias.name) for alias in node.names]
            pairs += [(base, part) for part in base.split(".")]
        else:
            continue
        for module, name in pairs:
            if name.startswith("_") and not name.endswith("__") and _package_of(module) != package:
                found.append(f"{module} -> {name}")
    return sorted(set(found))


def _graph() -> dict[str, set[str]]:
    files = FILES
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        graph[module] = {
            name
            for name in _imports(ast.parse(path.read_text(encoding="utf-8")), package)
            if name in files and name != module
        }
    return graph


GRAPH = _graph()


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def _core(module: str) -> bool:
    return module.startswith("olparser") and not (module == ADAPTERS or module.startswith(ADAPTERS + "."))


def test_the_import_graph_has_no_circles():
    assert _cycles(GRAPH) == []


def test_the_pure_core_imports_nothing_from_the_adapters_or_the_tools():
    crossings = sorted(
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        if _core(module)
        for target in targets
        if not _core(target)
    )
    assert crossings == []


def test_olparser_imports_nothing_from_tools_and_bench_nothing_from_tests():
    assert (
        sorted(
            f"{m} -> {t}" for m, ts in GRAPH.items() if m.startswith("olparser") for t in ts if t.startswith("tools")
        )
        == []
    )
    bench_imports = {
        name
        for path in (PROJECT_ROOT / "bench").rglob("*.py")
        for name in _imports(ast.parse(path.read_text(encoding="utf-8")), "bench")
    }
    assert sorted(name for name in bench_imports if name == "tests" or name.startswith("tests.")) == []


def test_no_module_imports_another_packages_private_names():
    found = {
        module: names
        for module, path in FILES.items()
        if (
            names := private_imports(
                ast.parse(path.read_text(encoding="utf-8")),
                module if path.name == "__init__.py" else module.rpartition(".")[0],
            )
        )
    }
    assert found == {}


def test_a_private_import_from_another_package_is_seen():
    tree = ast.parse(
        "from olparser.naming.engine import _cache\nfrom ..spark import _rows\nfrom .jobs import _own\n"
        "import olparser._hidden\nfrom olparser.runs import merge\n"
    )
    assert private_imports(tree, "tools.catalog") == [
        "olparser._hidden -> _hidden",
        "olparser.naming.engine -> _cache",
        "tools.spark -> _rows",
    ]


def test_tools_modules_import_each_other_relatively():
    """In the wheel, tools/ is `ol2purview_tools`: an absolute `tools.` import would load another distribution's
    `tools` (or none). Only the spark-submit script, run by path, names both (tools/spark/main.py)."""
    absolute = sorted(
        f"{module} -> {name}"
        for module, path in FILES.items()
        if module.startswith("tools.") and module != "tools.spark.main"
        for name in _imports(ast.parse(path.read_text(encoding="utf-8")), "")
        if name == "tools" or name.startswith("tools.")
    )
    assert absolute == []


def test_the_graph_is_read_from_the_source():
    # the checks above see real edges: the runtime composes the core and the adapters
    assert {"olparser.pipeline", "olparser.adapters.run_state"} <= GRAPH["olparser.adapters.runtime"]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


PIPELINE = "olparser.pipeline"
# The composition root and the operations the Functions handlers call build and drive the runner, so they import the
# pipeline; they live in olparser/adapters/ (design.md), the only adapters allowed to.
COMPOSITION = ("olparser.adapters.operations", "olparser.adapters.runtime")


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def pipeline_imports(tree: ast.AST, package: str) -> list[str]:
    """The olparser.pipeline modules `tree` imports: at any depth (a lazy import in a function counts), relative
    ones resolved, annotations under `if TYPE_CHECKING:` included."""
    return sorted(name for name in _imports(tree, package, annotations=True) if _within(name, PIPELINE))


def _pipeline_importers() -> dict[str, list[str]]:
    return {
        module: names
        for module, path in FILES.items()
        if _within(module, "olparser") and not _within(module, PIPELINE)
        if (names := pipeline_imports(ast.parse(path.read_text(encoding="utf-8")), _package_of(module)))
    }


def test_the_core_and_the_adapters_import_nothing_from_the_pipeline():
    """The layers: the pure core (contract, naming, runs, lineage, resolution, sql, history, settings, jsontypes)
    and the adapters sit under the orchestration (olparser/pipeline/), never the reverse."""
    offenders = {module: names for module, names in _pipeline_importers().items() if module not in COMPOSITION}
    assert offenders == {}


def test_only_the_composition_root_imports_the_pipeline_from_the_adapters():
    # each exception still needs to be one: a module that no longer imports the pipeline leaves the list
    assert sorted(module for module in _pipeline_importers() if module in COMPOSITION) == list(COMPOSITION)


def test_a_pipeline_import_is_seen_wherever_it_is():
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from olparser.pipeline.writing import Uploader\n"
        "def later():\n    from ...pipeline import relink\n"
        "from ..runs import ledger\nimport olparser.pipeline.policy\n"
    )
    assert pipeline_imports(tree, "olparser.adapters.catalog") == [
        "olparser.pipeline.policy",
        "olparser.pipeline.relink",
        "olparser.pipeline.writing",
    ]


@pytest.mark.parametrize(
    "package",
    sorted(p.parent.relative_to(PROJECT_ROOT).as_posix() for p in (PROJECT_ROOT / "olparser").rglob("__init__.py")),
)
def test_every_package_says_what_it_is(package: str):
    tree = ast.parse((PROJECT_ROOT / package / "__init__.py").read_text(encoding="utf-8"))
    docstring = ast.get_docstring(tree) or ""
    assert len(docstring) > 40, f"{package}/__init__.py needs a docstring that says what the package is"


PATH_NAMED = re.compile(r"\b((?:olparser|tools|bench|tests)/[\w/]+\.py)\b")
FOLDER_NAMED = re.compile(r"\b((?:olparser|tools|bench|tests)/[\w/]+/)(?=[\s`),.;:]|$)")
MODULE_NAMED = re.compile(r"\b(olparser(?:\.\w+)+)")


def _docstrings(tree: ast.AST) -> list[str]:
    """The module's docstring and those of its classes and functions."""
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)))]
    return [text for text in (ast.get_docstring(node) for node in nodes) if text]  # type: ignore[arg-type]


def _defines(module: str, name: str) -> bool:
    """Whether `module` (or the package) defines or imports `name` at its top level."""
    tree = ast.parse(FILES[module].read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name) == name for a in node.names):
            return True
    return False


def _named_but_missing(text: str) -> list[str]:
    missing = [path for path in PATH_NAMED.findall(text) if not (PROJECT_ROOT / path).is_file()]
    missing += [path for path in FOLDER_NAMED.findall(text) if not (PROJECT_ROOT / path).is_dir()]
    for dotted in MODULE_NAMED.findall(text):
        parts = dotted.rstrip(".").split(".")
        known = next((i for i in range(len(parts), 0, -1) if ".".join(parts[:i]) in MODULES), 0)
        rest = parts[known:]
        if not known or len(rest) > 1 or (rest and not _defines(".".join(parts[:known]), rest[0])):
            missing.append(dotted)
    return missing


def test_every_module_a_docstring_names_exists():
    # a docstring that points at a file or module that was moved or renamed tells the reader something untrue
    found = {
        f"{module}: {name}"
        for module, path in FILES.items()
        if module.split(".")[0] in ("olparser", "tools", "bench")
        for text in _docstrings(ast.parse(path.read_text(encoding="utf-8")))
        for name in _named_but_missing(text)
    }
    assert sorted(found) == []


def test_a_docstring_naming_a_missing_module_is_found():
    assert (
        _named_but_missing(
            "see olparser/pipeline/writing.py, olparser/pipeline/ and olparser.pipeline.writing.write_plans"
        )
        == []
    )
    assert _named_but_missing(
        "see olparser/nowhere.py, olparser/nowhere/, olparser.nowhere and olparser.pipeline.writing.nothing"
    ) == [
        "olparser/nowhere.py",
        "olparser/nowhere/",
        "olparser.nowhere",
        "olparser.pipeline.writing.nothing",
    ]
