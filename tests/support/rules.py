"""The tests' rules: the shipped mapping rules, never the file users edit.

`config/OlToPurviewMappings.json` is the rule file the README tells users to edit; a test that loaded it would fail as
soon as a user changed a rule there. Nothing loads it by default: `Settings()` and `Settings.from_env()` default to
`MAPPINGS_PATH`, the shipped rules (package data of `olparser`, olparser/naming/shipped), which change only with the
tests that rely on them. Only the entry points that run in the repository choose the user's file (function_app.py
and `ol2purview serve` through olparser.adapters.rules_file.use_app_rules, `make lint-config`): the root conftest
sets OL_TO_PURVIEW_MAPPINGS_PATH to `MAPPINGS_PATH` in os.environ when it is imported, and removes the inline
`OlToPurviewMappings`, so that every process a test starts (serve, worker, qn-tester, replay, Spark jobs) and every
function_app.py a test imports reads the shipped rules. A test that builds a child's environment from scratch passes
OL_TO_PURVIEW_MAPPINGS_PATH itself.
"""

from __future__ import annotations

import os
from typing import MutableMapping

from olparser.settings import SHIPPED_MAPPINGS_PATH

MAPPINGS_PATH = SHIPPED_MAPPINGS_PATH


def use_the_copy_in_child_processes(environ: MutableMapping[str, str] = os.environ) -> None:
    """Point the processes started from now on (with this environment) at the shipped rules:
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
