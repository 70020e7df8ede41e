"""No test asserts on time: on a loaded 2-core machine a wall-clock or CPU bound fails for reasons that are not the
code's. Bounds on work are asserted by counting (calls, polls, bytes, attempts); timings live in bench/. Liveness
waits go through the one poll helper, tests.support.waiting.wait_until (it raises AssertionError after a generous limit,
it never `assert`s a clock reading).

The check reads every test module's syntax tree: within each function, a name assigned from an expression that reads
a clock (time.monotonic, perf_counter, process_time, thread_time; and their _ns forms) is a clock value, and so is any
name assigned from arithmetic on a clock value (`elapsed = time.monotonic() - started`); an `assert` whose condition
reads a clock or a clock value is a timing assertion. (time.time() is left out: it stamps, as in "createTime lies
between the stamps before and after the upload", which a loaded machine cannot make fail; the result of a call that
was given a clock value is not one either.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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

    def is_clock_call(self, node: ast.AST) -> bool:
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        if isinstance(func, ast.Attribute):
            return func.attr in CLOCKS and isinstance(func.value, ast.Name) and func.value.id == "time"
        # `from time import monotonic`, or a function of this module that returns a clock value
        return isinstance(func, ast.Name) and (func.id in CLOCKS or ALL in self.functions.get(func.id, ()))

    def reads(self, node: ast.AST, names: set[str]) -> bool:
        """Whether `node` is a clock reading or arithmetic/comparison on one; the result of a call is not (a function
        given a clock value returns something else), except min/max/abs/round/float/int over clock values."""
        if self.is_clock_call(node) or (isinstance(node, ast.Name) and node.id in names):
            return True
        if isinstance(node, ast.Call):
            passes_on = isinstance(node.func, ast.Name) and node.func.id in PASS_ON
            return passes_on and any(self.reads(arg, names) for arg in node.args)
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
        return {sub.id for target in targets for sub in ast.walk(target) if isinstance(sub, ast.Name)}

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

    def names(self, scope: ast.AST) -> set[str]:
        names: set[str] = set()
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


def _own_nodes(scope: ast.AST):
    """The nodes of a module or function body, without the bodies of the functions and classes defined in it."""
    for child in ast.iter_child_nodes(scope):
        yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield from _own_nodes(child)


def timing_assertions(source: str) -> list[int]:
    """Line numbers of the `assert` statements in `source` whose condition reads a clock, directly or through a
    name assigned (in the same function or module body) from a clock reading, or through a function of the module
    that returns one."""
    tree = ast.parse(source)
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    clocks = _Clocks()
    changed = True
    while changed:  # until no new function returns a clock value (one may return another's)
        found = {f.name: positions for f in functions if (positions := clocks.returned(f))}
        changed = found != clocks.functions
        clocks.functions = found
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


def test_no_test_asserts_on_time():
    found = {}
    for path in module_paths():
        relative = path.relative_to(TESTS).as_posix()
        if lines := timing_assertions(path.read_text(encoding="utf-8")):
            found[relative] = lines
    assert found == {}, (
        "assert on a count of work instead (calls, polls, bytes), or wait with tests.support.waiting.wait_until"
    )
