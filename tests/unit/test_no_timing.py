"""No test asserts on time: on a loaded 2-core machine a wall-clock or CPU bound fails for reasons that are not the
code's. Bounds on work are asserted by counting (calls, polls, bytes, attempts); timings live in bench/. Liveness
waits go through the one poll helper, tests.support.waiting.wait_until (it raises AssertionError after a generous limit,
it never `assert`s a clock reading).

The check reads every test module's syntax tree: within each function, a name assigned from an expression that reads
a clock (time.monotonic, perf_counter, process_time, thread_time; and their _ns forms) is a clock value, and so is any
name assigned from arithmetic on a clock value (`elapsed = time.monotonic() - started`); an `assert` whose condition
reads a clock or a clock value is a timing assertion. The helpers a module imports from the project (tests/support,
tools; not bench/, which measures time on purpose) are read the same way: a helper that returns a clock value, or
whose result carries an argument given one (`within_bound(seconds, ...)`), makes a clock value of its call.
(time.time() is left out: it stamps, as in "createTime lies between the stamps before and after the upload", which a
loaded machine cannot make fail; the result of any other call that was given a clock value is not one either.)

What no syntax tree shows is an outcome raced against a deadline the product keeps (a parse that must outlast
0.5 s): such a test sets the deadline so that the race has one answer (0, or a generous one).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.module_imports import absolute, module_name

TESTS = Path(__file__).resolve().parents[1]
CLOCKS = {"monotonic", "perf_counter", "process_time", "thread_time"}  # time.time() stamps, it does not measure
CLOCKS |= {f"{name}_ns" for name in CLOCKS}


PASS_ON = {"min", "max", "abs", "round", "float", "int", "sum", "next", "sorted", "list", "tuple"}  # keep clock values
FILLS = {
    "append",
    "extend",
    "add",
    "insert",
    "appendleft",
}  # `samples.append((time.monotonic(), n))`: a clock container
ALL = -1  # a function whose whole result is a clock value (else: the positions of its returned tuple that are)


class _Clocks:
    """The clock values of one module: functions whose result (or part of a returned tuple) is one, and per scope
    the names assigned one."""

    def __init__(self) -> None:
        self.functions: dict[str, set[int]] = {}
        # function -> the parameters (positions and names) whose value its result carries (`return seconds <= b`)
        self.passes: dict[str, set[int | str]] = {}

    def is_clock_call(self, node: ast.AST) -> bool:
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr in CLOCKS and isinstance(func.value, ast.Name) and func.value.id == "time":
                return True
        # `from time import monotonic`, or a function of this module (or one it imports from the project, by name or
        # as `module.function`) that returns a clock value
        name = _called(func)
        return name is not None and (name in CLOCKS or ALL in self.functions.get(name, ()))

    def reads(self, node: ast.AST, names: set[str]) -> bool:
        """Whether `node` is a clock reading or arithmetic/comparison on one; the result of a call is not (a function
        given a clock value returns something else), except min/max/abs/round/float/int over clock values, and a
        function of the project whose result carries the argument given a clock value."""
        if self.is_clock_call(node) or (isinstance(node, ast.Name) and node.id in names):
            return True
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _called(node) in names:
            return True
        if isinstance(node, ast.Call):
            called = _called(node.func)
            passes_on = isinstance(node.func, ast.Name) and node.func.id in PASS_ON
            if passes_on and any(self.reads(arg, names) for arg in node.args):
                return True
            carried = self.passes.get(called or "", set())
            return any(self.reads(arg, names) for i, arg in enumerate(node.args) if i in carried) or any(
                self.reads(k.value, names) for k in node.keywords if k.arg in carried
            )
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        return any(self.reads(child, names) for child in ast.iter_child_nodes(node))

    def assigned(self, node: ast.Assign | ast.AugAssign | ast.AnnAssign, names: set[str]) -> set[str]:
        """The names `node` gives a clock value."""
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and len(targets) == 1
            and isinstance(targets[0], ast.Tuple)
            and ALL not in self.functions.get(value.func.id, {ALL})
        ):
            positions = self.functions[value.func.id]
            return {elt.id for i, elt in enumerate(targets[0].elts) if i in positions and isinstance(elt, ast.Name)}
        if not self.reads(value, names):
            return set()
        # `report.seconds = ...` makes `report.seconds` a clock value, not the whole report
        fields = {_called(t) for t in targets if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)}
        whole = [t for t in targets if not (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name))]
        return {sub.id for target in whole for sub in ast.walk(target) if isinstance(sub, ast.Name)} | {
            f for f in fields if f is not None
        }

    def filled(self, node: ast.Call, names: set[str]) -> set[str]:
        """The container `node` puts a clock value into (`samples.append((time.monotonic(), calls))`), if any."""
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in FILLS
            and isinstance(func.value, ast.Name)
            and any(self.reads(arg, names) for arg in node.args)
        ):
            return {func.value.id}
        return set()

    def names(self, scope: ast.AST, seed: frozenset[str] = frozenset()) -> set[str]:
        names: set[str] = set(seed)
        own = list(_own_nodes(scope))
        # a nested function filling a container of its scope counts too (a sampler thread's loop)
        calls = [n for n in ast.walk(scope) if isinstance(n, ast.Call)]
        assignments = [
            n for n in own if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and n.value is not None
        ]
        changed = True
        while changed:  # until no new name: `b = a - 1` after `a = time.monotonic()`, in any order
            new = (
                set().union(
                    *(self.assigned(node, names) for node in assignments), *(self.filled(call, names) for call in calls)
                )
                - names
            )
            names |= new
            changed = bool(new)
        return names

    def returned(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
        names = self.names(function)
        positions: set[int] = set()
        for node in _own_nodes(function):
            if isinstance(node, ast.Return) and node.value is not None:
                if isinstance(node.value, ast.Tuple):
                    positions |= {i for i, elt in enumerate(node.value.elts) if self.reads(elt, names)}
                elif self.reads(node.value, names):
                    positions.add(ALL)
        return positions

    def carried(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int | str]:
        """The parameters (positions and names) whose value `function`'s result carries."""
        params = [*function.args.posonlyargs, *function.args.args]
        found: set[int | str] = set()
        for position, param in enumerate([*params, *function.args.kwonlyargs]):
            names = self.names(function, frozenset({param.arg}))
            returns = [n for n in _own_nodes(function) if isinstance(n, ast.Return) and n.value is not None]
            if any(self.reads(node.value, names) for node in returns):
                found |= {param.arg, *([position] if position < len(params) else [])}
        return found


def _called(func: ast.expr) -> str | None:
    """`f` for `f(...)`, `m.f` for `m.f(...)`; None for other calls."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return None


def _own_nodes(scope: ast.AST):
    """The nodes of a module or function body, without the bodies of the functions and classes defined in it."""
    for child in ast.iter_child_nodes(scope):
        yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield from _own_nodes(child)


def _module_clocks(tree: ast.Module, imported: _Clocks | None = None) -> tuple[_Clocks, list[ast.FunctionDef]]:
    """The clock values of a module's functions, with what its project imports bring (`imported`)."""
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    clocks = _Clocks()
    seeds = imported or _Clocks()
    clocks.functions, clocks.passes = dict(seeds.functions), dict(seeds.passes)
    changed = True
    while changed:  # until no new function returns a clock value (one may return another's, or carry it)
        found = {**seeds.functions, **{f.name: p for f in functions if (p := clocks.returned(f))}}
        carried = {**seeds.passes, **{f.name: c for f in functions if (c := clocks.carried(f))}}
        changed = (found, carried) != (clocks.functions, clocks.passes)
        clocks.functions, clocks.passes = found, carried
    return clocks, functions


PROJECT_PACKAGES = ("tests", "tools")  # bench/ measures time on purpose
_PROJECT_CLOCKS: dict[str, _Clocks] = {}


def project_clocks(module: str) -> _Clocks:
    """The clock values of a module of the project (tests/support, tools...): its functions that return one, or carry
    an argument's, following its own imports of the project."""
    if module in _PROJECT_CLOCKS:
        return _PROJECT_CLOCKS[module]
    _PROJECT_CLOCKS[module] = _Clocks()  # while it is read: an import cycle brings nothing
    base = TESTS.parent.joinpath(*module.split("."))
    path = next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)
    if path is not None:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        _PROJECT_CLOCKS[module] = _module_clocks(tree, imported_clocks(tree, module, path.name == "__init__.py"))[0]
    return _PROJECT_CLOCKS[module]


def imported_clocks(tree: ast.Module, module: str = "", is_package: bool = False) -> _Clocks:
    """What a module's imports of the project bring: `f` for `from m import f`, `alias.f` for `import m as alias` or
    `from package import m as alias`."""
    seeds = _Clocks()

    def bring(local: str, source: str, name: str | None) -> None:
        if source.split(".")[0] not in PROJECT_PACKAGES:
            return
        theirs = project_clocks(source)
        if name is not None and (name in theirs.functions or name in theirs.passes):
            seeds.functions.update({local: theirs.functions[name]} if name in theirs.functions else {})
            seeds.passes.update({local: theirs.passes[name]} if name in theirs.passes else {})
            return
        whole = project_clocks(f"{source}.{name}" if name else source)  # a module imported whole
        seeds.functions.update({f"{local}.{n}": p for n, p in whole.functions.items() if "." not in n})
        seeds.passes.update({f"{local}.{n}": p for n, p in whole.passes.items() if "." not in n})

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = absolute(node.module, node.level, module, is_package)
            for alias in node.names:
                bring(alias.asname or alias.name, source, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bring(alias.asname or alias.name, alias.name, None)
    return seeds


def timing_assertions(source: str, module: str = "", is_package: bool = False) -> list[int]:
    """Line numbers of the `assert` statements in `source` whose condition reads a clock, directly or through a
    name assigned (in the same function or module body) from a clock reading, or through a function of the module,
    or of the project modules it imports (tests/support, tools), that returns one or carries one it was given."""
    tree = ast.parse(source)
    clocks, functions = _module_clocks(tree, imported_clocks(tree, module, is_package))
    lines: set[int] = set()
    for scope in [tree, *functions]:
        names = clocks.names(scope)
        lines |= {n.lineno for n in _own_nodes(scope) if isinstance(n, ast.Assert) and clocks.reads(n.test, names)}
    return sorted(lines)


def module_paths() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "sample_app" not in p.parts)


@pytest.mark.parametrize(
    "source, expected",
    [
        (
            "import time\ndef t():\n    started = time.monotonic()\n    work()\n    assert time.monotonic() - started < 2\n",
            [5],
        ),
        (
            "import time\ndef t():\n    s = time.process_time()\n    e = time.process_time() - s\n    x = e * 2\n"
            "    assert x < 0.5\n",
            [6],
        ),
        ("from time import perf_counter\ndef t():\n    assert perf_counter() < deadline\n", [3]),
        (
            "import time\ndef t():\n    deadline = time.monotonic() + 10\n    while not done():\n"
            "        assert time.monotonic() < deadline\n",
            [5],
        ),
        (
            "import time\ndef t():\n    calls = count()\n    time.sleep(0.1)\n    assert calls == 3\n",
            [],
        ),  # sleeping is no clock
        ("def t():\n    time = 3\n    assert time == 3\n", []),
        ("import time\ndef t():\n    report = sweep(now=time.monotonic() + 2)\n    assert report.failed == 0\n", []),
        ("import time\ndef t():\n    start = int(time.time() * 1000)\n    assert created >= start\n", []),  # a stamp
        ("import time\nstarted = time.monotonic()\ndef t():\n    assert started\n", []),  # another scope
        ("import time\ndef t():\n    best = min(time.process_time() - s for s in x)\n    assert best < 1\n", [4]),
        (
            "import time\ndef run():\n    s = time.process_time()\n    return time.process_time() - s, 3\n"
            "def t():\n    cpu, calls = run()\n    assert calls == 3\n    assert cpu < 10\n",
            [8],
        ),  # through a tuple
        (
            "import time\ndef t():\n    samples = []\n    def sample():\n        samples.append((time.monotonic(), 3))\n"
            "    first = next(s for s in samples if s[1] > 1)\n    rate = 3 / (samples[-1][0] - first[0])\n"
            "    assert rate < 12\n",
            [8],
        ),  # through a container filled by a nested function
        (
            "import time\ndef least():\n    return time.process_time()\ndef ok():\n    return least() < 2\n"
            "def t():\n    assert ok()\n",
            [7],
        ),  # through two functions
    ],
)
def test_the_check_finds_timing_assertions_and_only_them(source, expected):
    assert timing_assertions(source) == expected


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from tools.samples.hostile import cpu_times\ndef t():\n    assert min(cpu_times(f, 3)) < 0.01\n", [3]),
        ("from tools.samples import hostile as h\ndef t():\n    assert h.cpu_times(f, 1)[0] < 1\n", [3]),
        ("import tools.samples.hostile as h\ndef t():\n    assert h.cpu_times(f, 1)[0] < 1\n", [3]),
        (
            "from tools.samples.hostile import cpu_times\ndef cpu_seconds(fn):\n    return min(cpu_times(fn, 3))\n"
            "def within_bound(seconds, size):\n    return seconds <= size / 100\n"
            "def t():\n    assert within_bound(cpu_seconds(f), len(data))\n",
            [7],
        ),  # through a helper that returns one, then one that carries its argument
        ("from tests.support.waiting import wait_until\ndef t():\n    assert wait_until(done) == 3\n", []),
        (
            "import time\ndef t():\n    report.seconds = time.monotonic() - started\n    assert report.tally == 3\n"
            "    assert report.seconds < 2\n",
            [5],
        ),  # a field given a clock value is one, its object is not
    ],
)
def test_the_check_follows_the_project_helpers_a_module_imports(source, expected):
    """Helpers in tests/support and tools (bench/ measures on purpose) are read as the module's own functions are."""
    assert timing_assertions(source, "tests.unit.test_example") == expected


def test_no_test_asserts_on_time():
    found = {}
    for path in module_paths():
        relative = path.relative_to(TESTS).as_posix()
        module = module_name(path, TESTS.parent)
        if lines := timing_assertions(path.read_text(encoding="utf-8"), module, path.name == "__init__.py"):
            found[relative] = lines
    assert found == {}, (
        "assert on a count of work instead (calls, polls, bytes), or wait with tests.support.waiting.wait_until"
    )
