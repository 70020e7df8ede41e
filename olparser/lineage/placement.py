"""Which Purview collection a run's entities go to: placement rules over plain data (no I/O).

The rules file (PLACEMENT_RULES_PATH, JSON):

    {"rules": [
      {"collection": "finance",      "jobNamespace": "adb-1234567890123456.7.azuredatabricks.net"},
      {"collection": "Lineage team", "workspace": "adb-1234567890123456.7.azuredatabricks.net"},
      {"collection": "fin01a",       "outputPrefix": "https://contosolake.dfs.core.windows.net/finance/"}
    ]}

Each rule names a collection (its name or its friendly name, resolved once against the account) and exactly one
condition: `jobNamespace` (the OpenLineage job namespace, exactly), `workspace` (the Databricks workspace host the run
ran in) or `outputPrefix` (the start of a process output's qualifiedName, as written to Purview). The first rule that
matches wins. Otherwise the collection of the run's output's scanned asset, else PURVIEW_COLLECTION, else the root
(chosen by the uploader, which knows the catalog).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

CONDITIONS = ("jobNamespace", "workspace", "outputPrefix")
WORKSPACE_PREFIX = "databricks://"
_WORKSPACE_TYPE = "databricks_workspace"


@dataclass(frozen=True)
class PlacementRule:
    collection: str
    condition: str  # one of CONDITIONS
    value: str

    def describe(self) -> str:
        return f"{self.condition} {self.value!r} -> collection {self.collection!r}"


@dataclass(frozen=True)
class PlacementFacts:
    """What the rules look at in a run's plan."""

    job_namespaces: frozenset[str]
    workspaces: frozenset[str]
    outputs: tuple[tuple[str, str], ...]  # (typeName, qualifiedName), sorted


def problems(document: Any) -> list[str]:
    """Every problem of a rules document, each naming the rule (by position) and the field; [] when it is valid."""
    if not isinstance(document, dict) or not isinstance(document.get("rules"), list):
        return ['the placement rules must be a JSON object {"rules": [...]}']
    found = [f"unknown key {key!r} (expected 'rules')" for key in sorted(set(document) - {"rules"})]
    for number, rule in enumerate(document["rules"], 1):
        where = f"rule {number}"
        if not isinstance(rule, dict):
            found.append(f"{where}: a rule is a JSON object with 'collection' and one of {', '.join(CONDITIONS)}")
            continue
        collection = rule.get("collection")
        if not isinstance(collection, str) or not collection.strip():
            found.append(f"{where}: 'collection' must name a collection (its name or friendly name)")
        conditions = [key for key in CONDITIONS if key in rule]
        if len(conditions) != 1:
            found.append(
                f"{where}: give exactly one of {', '.join(CONDITIONS)} (got "
                f"{', '.join(conditions) if conditions else 'none'})"
            )
        for key in conditions:
            if not isinstance(rule[key], str) or not rule[key].strip():
                found.append(f"{where}: '{key}' must be a non-empty string")
        unknown = sorted(set(rule) - {"collection", *CONDITIONS})
        if unknown:
            found.append(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}")
        if rule.get("workspace", "").startswith(WORKSPACE_PREFIX) if isinstance(rule.get("workspace"), str) else False:
            found.append(f"{where}: 'workspace' is the host (adb-....azuredatabricks.net), without databricks://")
    return found


def parse_rules(document: Any) -> tuple[PlacementRule, ...]:
    """The rules of a valid document; a ValueError listing every problem otherwise."""
    found = problems(document)
    if found:
        raise ValueError("placement rules: " + "; ".join(found))
    rules = []
    for rule in document["rules"]:
        condition = next(key for key in CONDITIONS if key in rule)
        rules.append(PlacementRule(rule["collection"].strip(), condition, rule[condition].strip()))
    return tuple(rules)


def load_rules(path: Path | None) -> tuple[PlacementRule, ...]:
    """The rules in `path` (none when no path is set); a ValueError naming the file and every problem."""
    if path is None:
        return ()
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"PLACEMENT_RULES_PATH {path}: cannot be read ({exc.strerror})") from None
    except ValueError as exc:
        raise ValueError(f"PLACEMENT_RULES_PATH {path}: not valid JSON ({exc})") from None
    try:
        return parse_rules(document)
    except ValueError as exc:
        raise ValueError(f"PLACEMENT_RULES_PATH {path}: {exc}") from None


def run_facts(entities: Iterable[dict[str, Any]], is_process: Any) -> PlacementFacts:
    """The job namespaces, workspaces and outputs of a plan's entities (`is_process` tells the processes)."""
    namespaces: set[str] = set()
    workspaces: set[str] = set()
    outputs: set[tuple[str, str]] = set()
    for entity in entities:
        attributes = entity.get("attributes") or {}
        if entity.get("typeName") == _WORKSPACE_TYPE:
            qualified_name = str(attributes.get("qualifiedName", ""))
            if qualified_name.startswith(WORKSPACE_PREFIX):
                workspaces.add(qualified_name[len(WORKSPACE_PREFIX) :].split("/", 1)[0])
        if not is_process(entity):
            continue
        job = str(attributes.get("openlineageJob") or "")
        namespaces.add(job)  # "{namespace}/{name}": matched by prefix, a namespace may hold '/'
        for ref in attributes.get("outputs") or []:
            key = _ref_key(ref)
            if key is not None:
                outputs.add(key)
    return PlacementFacts(frozenset(namespaces), frozenset(workspaces), tuple(sorted(outputs)))


def matching_rule(rules: Iterable[PlacementRule], facts: PlacementFacts) -> PlacementRule | None:
    """The first rule the run matches, or None."""
    for rule in rules:
        if rule.condition == "jobNamespace" and any(job.startswith(rule.value + "/") for job in facts.job_namespaces):
            return rule
        if rule.condition == "workspace" and rule.value.lower() in {w.lower() for w in facts.workspaces}:
            return rule
        if rule.condition == "outputPrefix" and any(qn.startswith(rule.value) for _, qn in facts.outputs):
            return rule
    return None


def _ref_key(ref: Any) -> tuple[str, str] | None:
    if not isinstance(ref, dict):
        return None
    unique = ref.get("uniqueAttributes") or {}
    if isinstance(ref.get("typeName"), str) and isinstance(unique.get("qualifiedName"), str):
        return ref["typeName"], unique["qualifiedName"]
    return None
