"""naming: OpenLineage dataset (namespace, name) → Purview (qualifiedName, type), by an ordered list of rules.

Config: a JSON list of rules `{name, parserConditions: [{op1, compare, op2}], qualifiedName, purviewDataType,
purviewPrefix, normalize?, description?}` (or an object holding it under `olToPurviewMappings` / `rules`), validated
against mappings.schema.json. Rules are tried in order; the first whose conditions all hold and whose template can be
filled wins. Tokens: tokens.py. Operators: conditions.py. Template grammar and `normalize` steps: templates.py.
DBFS paths and /mnt mount points: mounts.py. Lint: lint.py.

    engine = MappingEngine.from_settings(settings)            # or from_path / from_json_text / from_rules
    engine.map(namespace, name, mounts=mounts_from_facet(env_props), workspace_url=host) -> MappingResult
    engine.explain(...) -> Explanation                        # tokens, each rule's conditions, the winner
"""

from .engine import ConditionTrace, Explanation, MappingEngine, MappingResult, RuleSource, RuleTrace
from .lint import LintFinding, lint_config
from .mounts import MountPoint, mounts_from_facet
from .rules import ConfigError, ConfigProblem

__all__ = [
    "ConditionTrace",
    "ConfigError",
    "ConfigProblem",
    "Explanation",
    "LintFinding",
    "MappingEngine",
    "MappingResult",
    "MountPoint",
    "RuleSource",
    "RuleTrace",
    "lint_config",
    "mounts_from_facet",
]
