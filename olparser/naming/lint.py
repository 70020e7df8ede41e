"""`qn-tester lint`: what is wrong with a mapping config, beyond whether it loads.

Findings: schema violations, tokens that do not exist (in conditions or templates), template syntax, bad operands,
duplicate rule names, and rules that can never match because an earlier rule always matches first. The shadowing
check is conservative (it only reports what it can prove): rule A shadows a later rule B when every condition of A
is implied by a condition of B and every token A's template reads is known to exist whenever B matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .conditions import Condition
from .rules import ConfigError, ConfigProblem, Rule, compile_schema_valid, schema_problems, unwrap


@dataclass(frozen=True)
class LintFinding:
    kind: str  # schema | token | template | operand | duplicate-name | shadowed
    message: str
    rule_index: int | None = None
    rule_name: str | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = ConfigProblem("", self.rule_index, self.rule_name, self.field)
        return f"[{self.kind}] {str(where)}{self.message}"


def _kind(problem: ConfigProblem) -> str:
    field = problem.field or ""
    if field.endswith(".op1") or problem.message.startswith("placeholder at"):
        return "token"
    if field == "qualifiedName":
        return "template"
    return "operand"


def _options(c: Condition) -> tuple[str, ...]:
    values = c.op2 if isinstance(c.op2, list) else [c.op2]
    return tuple(str(int(v)) if isinstance(v, float) and v.is_integer() else str(v) for v in values)


def _number(c: Condition) -> float | None:
    try:
        return float(_options(c)[0])
    except ValueError:
        return None


def _implies(b: Condition, a: Condition) -> bool:
    """True when b holding proves a holds (same token)."""
    if a.op1 != b.op1:
        return False
    ao, bo = _options(a), _options(b)
    if (a.compare, ao) == (b.compare, bo):
        return True
    if b.compare == "=" and not a.token.is_count:
        tests: dict[str, Callable[[Any], bool]] = {
            "=": lambda v: v in ao,
            "!=": lambda v: v not in ao,
            "contains": lambda v: any(o in v for o in ao),
            "startswith": lambda v: v.startswith(ao),
            "endswith": lambda v: v.endswith(ao),
        }
        test = tests.get(a.compare)
        return test is not None and all(test(v) for v in bo)
    if len(bo) == 1 and a.compare == b.compare:
        if a.compare == "contains":
            return any(o in bo[0] for o in ao)
        if a.compare == "startswith":
            return bo[0].startswith(ao)
        if a.compare == "endswith":
            return bo[0].endswith(ao)
        if a.compare in (">", "<"):
            an, bn = _number(a), _number(b)
            return an is not None and bn is not None and (bn >= an if a.compare == ">" else bn <= an)
    return False


_ALWAYS_PRESENT = ("prefix", "nameGroups[0]", "nameGroups[-1]")


def _shadows(a: Rule, b: Rule) -> bool:
    if not all(any(_implies(bc, ac) for bc in b.conditions) for ac in a.conditions):
        return False
    known = {c.token.text for c in b.conditions} | {t.text for t in b.template.tokens}
    return all(t.is_count or t.text in _ALWAYS_PRESENT or t.text in known for t in a.template.tokens)


def lint_rules(raw_rules: list[Any]) -> list[LintFinding]:
    """Every finding for a rule list (already unwrapped)."""
    schema = schema_problems(raw_rules)
    findings = [LintFinding("schema", p.message, p.rule_index, p.rule_name, p.field) for p in schema]
    compiled, problems = compile_schema_valid(raw_rules, schema)
    findings.extend(LintFinding(_kind(p), p.message, p.rule_index, p.rule_name, p.field) for p in problems)
    seen: dict[str, int] = {}
    for index, raw in enumerate(raw_rules):
        name = raw.get("name") if isinstance(raw, dict) else None
        if isinstance(name, str):
            if name in seen:
                findings.append(
                    LintFinding("duplicate-name", f"the name is already used by rule {seen[name]}", index, name, "name")
                )
            else:
                seen[name] = index
    for position, later in enumerate(compiled):
        for earlier in compiled[:position]:
            if _shadows(earlier, later):
                message = f"can never match: rule {earlier.index} '{earlier.name}' always matches first"
                findings.append(LintFinding("shadowed", message, later.index, later.name))
                break
    return findings


def lint_config(raw: Any) -> list[LintFinding]:
    """Every finding for a parsed config in either accepted shape."""
    try:
        rules = unwrap(raw)
    except ConfigError as exc:
        return [LintFinding("schema", str(exc))]
    return lint_rules(rules)
