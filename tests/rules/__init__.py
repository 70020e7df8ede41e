"""The tests' own copy of the shipped mapping rules, and the guard that keeps the suite off the file users edit.

Team rule: tests use their own copy of the shipped rules, never the file users edit. `config/OlToPurviewMappings.json`
is the rule file the README tells users to edit; a test that loaded it would fail as soon as a user added or changed a
rule there. So every test loads `MAPPINGS_PATH`: the shipped rules, package data of `olparser` (olparser/naming/shipped,
read with importlib.resources), which change only with the tests that rely on them:

- in the test process: `MappingEngine.from_path(MAPPINGS_PATH)`, and `Settings(mappings_path=MAPPINGS_PATH, ...)`
  wherever a test builds settings that load rules (`Settings()` never reads the environment; its default is the
  user's file);
- in the processes tests start (serve, worker, qn-tester, replay, Spark jobs): the root conftest sets
  OL_TO_PURVIEW_MAPPINGS_PATH to `MAPPINGS_PATH` in os.environ when it is imported, and removes the inline
  `OlToPurviewMappings` (which would win over it), so every child started with the test process's environment reads
  the copy. A test that builds a child's environment from scratch passes OL_TO_PURVIEW_MAPPINGS_PATH itself.

The guard (`install_guard`, called by the root conftest at import, so before any test module is collected): opening
the user's file in the test process raises `UserRulesFileRead`, which names the rule and the copy to use; the root
conftest also fails the test during which it happened, in case the code under test caught the error. Packaging the
product (the deployment zip holds config/) copies the file without reading rules from it: such a test opens it inside
`user_rules_file_allowed(why)`.
"""
from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from typing import Any, Iterator, MutableMapping

from olparser.settings import DEFAULT_MAPPINGS_PATH, SHIPPED_MAPPINGS_PATH

MAPPINGS_PATH = SHIPPED_MAPPINGS_PATH

_USER_FILE = os.path.realpath(DEFAULT_MAPPINGS_PATH)
_NAME = DEFAULT_MAPPINGS_PATH.name
_allowed = threading.local()
_installed = False
_reads: list[str] = []  # the user-file opens seen since the last take_reads(), with the test that made them


class UserRulesFileRead(RuntimeError):
    """A test opened config/OlToPurviewMappings.json, the rule file users edit."""


def refusal(path: str) -> str:
    """What the guard says when the user's file was opened as `path`."""
    return (f"a test opened {path}, the mapping-rule file users edit. Team rule: tests use their own copy of the "
            f"shipped rules, never the file users edit. Load {MAPPINGS_PATH} instead (tests.rules.MAPPINGS_PATH: "
            f"MappingEngine.from_path(MAPPINGS_PATH), Settings(mappings_path=MAPPINGS_PATH, ...); a child process "
            f"gets OL_TO_PURVIEW_MAPPINGS_PATH={MAPPINGS_PATH}).")


def _opened_path(target: Any) -> str | None:
    if isinstance(target, (str, bytes, os.PathLike)):
        return os.fsdecode(os.fspath(target))
    return None  # a file descriptor


def audit_hook(event: str, args: tuple[Any, ...]) -> None:
    """The audit hook: refuses an `open` of the user's rule file outside `user_rules_file_allowed`."""
    if event != "open" or not args:
        return
    path = _opened_path(args[0])
    if path is None or not path.endswith(_NAME) or getattr(_allowed, "why", None):
        return
    if os.path.realpath(path) == _USER_FILE:
        _reads.append(path)
        raise UserRulesFileRead(refusal(path))


def use_the_copy_in_child_processes(environ: MutableMapping[str, str] = os.environ) -> None:
    """Point the processes started from now on (with this environment) at the copy: OL_TO_PURVIEW_MAPPINGS_PATH, and
    no inline `OlToPurviewMappings` from the caller's shell, which would win over it."""
    environ["OL_TO_PURVIEW_MAPPINGS_PATH"] = str(MAPPINGS_PATH)
    environ.pop("OlToPurviewMappings", None)


def install_guard() -> None:
    """Make every open of the user's rule file in this process raise `UserRulesFileRead` (an audit hook, so it
    catches every way of opening it: the engine, Settings() defaults, `Path.read_text`, copies). Idempotent."""
    global _installed
    if not _installed:
        sys.addaudithook(audit_hook)
        _installed = True


def take_reads() -> list[str]:
    """The paths by which the user's file was opened (and refused) since the last call; forgets them."""
    reads, _reads[:] = list(_reads), []
    return reads


@contextmanager
def user_rules_file_allowed(why: str) -> Iterator[None]:
    """Let this thread open the user's file for the block: only to package the product (the file is copied into an
    artifact, not read for rules). `why` says so at the call."""
    if not why.strip():
        raise ValueError("say why the user's rule file may be opened here")
    previous = getattr(_allowed, "why", None)
    _allowed.why = why
    try:
        yield
    finally:
        _allowed.why = previous


# A rule file with one invalid rule (index 1, starting at line 4, column 3): what `serve`, `worker` and the reloading
# engine must refuse, naming the file, line, column and rule (tests/unit/adapters/test_rules_file.py, tests/e2e/
# test_fail_fast.py). The compare operators are those of olparser/naming/mappings.schema.json.
BROKEN_RULES = """[
  {"name": "kafka", "parserConditions": [{"op1": "prefix", "compare": "=", "op2": "kafka"}],
   "qualifiedName": "kafka://{nameGroups[0]}", "purviewDataType": "kafka_topic"},
  {"name": "broken", "parserConditions": [{"op1": "prefix", "compare": "~", "op2": "x"}],
   "qualifiedName": "x://{nameGroups[0]}", "purviewDataType": "t"}
]
"""
BROKEN_RULES_PROBLEM = ("{path}:4:3: rule 1 'broken', field parserConditions[0].compare: '~' is not one of ['=', '!=', "
                        "'contains', 'notcontains', 'icontains', 'startswith', 'endswith', 'contains-in', '>', '<']")
