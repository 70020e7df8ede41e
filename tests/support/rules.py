"""The tests' rules: the one rule file, config/OlToPurviewMappings.json, which every command reads in a checkout.

There is one committed copy of the mapping rules (the wheel packages it at build time), so the tests check the rules
users get: a change to a rule goes into config/ with the tests that rely on it. `MAPPINGS_PATH` is that file
(`olparser.settings.default_mappings_path()`, which is what `Settings()` and `Settings.from_env()` load); the root
conftest sets OL_TO_PURVIEW_MAPPINGS_PATH to it in os.environ when it is imported, and removes the inline
`OlToPurviewMappings`, so that a setting in the shell that runs the tests cannot point the processes a test starts
(serve, worker, qn-tester, replay, Spark jobs) at other rules. A test that builds a child's environment from scratch
passes OL_TO_PURVIEW_MAPPINGS_PATH itself, or leaves it out to test the default.
"""

from __future__ import annotations

import os
from typing import MutableMapping

from olparser.settings import CHECKOUT_MAPPINGS_PATH

MAPPINGS_PATH = CHECKOUT_MAPPINGS_PATH


def use_the_copy_in_child_processes(environ: MutableMapping[str, str] = os.environ) -> None:
    """Point the processes started from now on (with this environment) at the one rule file:
    OL_TO_PURVIEW_MAPPINGS_PATH, and no inline `OlToPurviewMappings` from the caller's shell, which would win."""
    environ["OL_TO_PURVIEW_MAPPINGS_PATH"] = str(MAPPINGS_PATH)
    environ.pop("OlToPurviewMappings", None)


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
BROKEN_RULES_PROBLEM = (
    "{path}:4:3: rule 1 'broken', field parserConditions[0].compare: '~' is not one of ['=', '!=', "
    "'contains', 'notcontains', 'icontains', 'startswith', 'endswith', 'contains-in', '>', '<']"
)


def rule(
    name: str, conditions: list[tuple[str, str, object]], qualified_name: str, purview_type: str = "t", **extra
) -> dict:
    """A rule dict in the config format, from compact condition tuples."""
    return {
        "name": name,
        "parserConditions": [{"op1": a, "compare": c, "op2": b} for a, c, b in conditions],
        "qualifiedName": qualified_name,
        "purviewDataType": purview_type,
        **extra,
    }
