"""Loading a mapping config: JSON text → schema check (jsonschema) → compiled rules, with errors that name the rule.

Accepted shapes: a bare JSON list of rules (the reference connector's file), or an object holding that list under
`olToPurviewMappings` (any case; the reference's app setting and deployment file) or `rules`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from .conditions import Condition, ConditionError, compile_condition
from .templates import Template, TemplateError, parse_template

SCHEMA_PATH = Path(__file__).with_name("mappings.schema.json")


@dataclass(frozen=True)
class ConfigProblem:
    """One thing wrong with a config. rule_index is None for problems with the file as a whole."""

    message: str
    rule_index: int | None = None
    rule_name: str | None = None
    field: str | None = None
    line: int | None = None  # where a JSON syntax error is (rule problems are located by `located`)
    column: int | None = None

    def __str__(self) -> str:
        where = []
        if self.rule_index is not None:
            where.append(f"rule {self.rule_index}" + (f" '{self.rule_name}'" if self.rule_name else ""))
        if self.field:
            where.append(f"field {self.field}")
        return (", ".join(where) + ": " if where else "") + self.message


class ConfigError(ValueError):
    """A config that cannot be used. Carries the first problem's rule index, rule name and field, and all problems."""

    def __init__(self, problems: list[ConfigProblem] | ConfigProblem):
        self.problems = tuple(problems) if isinstance(problems, list) else (problems,)
        first = self.problems[0]
        self.rule_index, self.rule_name, self.field = first.rule_index, first.rule_name, first.field
        more = f" (and {len(self.problems) - 1} more problem(s))" if len(self.problems) > 1 else ""
        super().__init__(str(first) + more)


@dataclass(frozen=True)
class Rule:
    """A compiled rule: conditions and template parsed once."""

    index: int
    name: str
    conditions: tuple[Condition, ...]
    template: Template
    purview_type: str


@lru_cache(maxsize=1)
def _validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return Draft202012Validator({"$ref": "#/$defs/rules", "$defs": schema["$defs"]})


def parse_json(text: str, source: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            ConfigProblem(
                f"{source} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
                line=exc.lineno,
                column=exc.colno,
            )
        ) from None


def rule_offsets(text: str) -> list[int]:
    """Where each rule of a config's JSON text starts (character offsets), in order, for either accepted shape; []
    when the text is not valid JSON or holds no rule list."""
    decoder = json.JSONDecoder()

    def skip(pos: int) -> int:
        while pos < len(text) and text[pos] in " \t\r\n\ufeff":
            pos += 1
        return pos

    def elements(pos: int) -> list[int]:  # text[pos] is the list's "["
        offsets: list[int] = []
        pos = skip(pos + 1)
        while text[pos] != "]":
            offsets.append(pos)
            pos = skip(decoder.raw_decode(text, pos)[1])
            if text[pos] != ",":
                break
            pos = skip(pos + 1)
        return offsets

    try:
        pos = skip(0)
        if text[pos] == "[":
            return elements(pos)
        pos = skip(pos + 1)
        while text[pos] == '"':
            key, pos = decoder.raw_decode(text, pos)
            pos = skip(skip(pos) + 1)  # past the ":"
            if key.lower() in ("oltopurviewmappings", "rules") and text[pos] == "[":
                return elements(pos)
            pos = skip(decoder.raw_decode(text, pos)[1])
            pos = skip(pos + 1) if text[pos] == "," else pos
    except (ValueError, IndexError):
        pass
    return []


def located(error: ConfigError, source: str, text: str) -> str:
    """`error` as `FILE:LINE:COLUMN: rule N 'name', field F: what`, the position being the start of the rule at fault
    (or of the JSON syntax error) in `text`, the config's contents; `FILE: ...` when there is no position."""
    first = error.problems[0]
    offset = None
    if first.line is not None:
        return f"{source}:{first.line}:{first.column}: {error}"
    if first.rule_index is not None:
        offsets = rule_offsets(text)
        offset = offsets[first.rule_index] if first.rule_index < len(offsets) else None
    if offset is None:
        return f"{source}: {error}"
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"{source}:{line}:{column}: {error}"


def read_path(path: str | Path) -> Any:
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(ConfigProblem(f"cannot read mapping config {path}: {exc.strerror or exc}")) from None
    return parse_json(text, str(path))


def unwrap(raw: Any) -> list[Any]:
    """The rule list out of either accepted shape."""
    if isinstance(raw, list):
        return raw
    if isinstance(raw, dict):
        for key, value in raw.items():
            if key.lower() in ("oltopurviewmappings", "rules") and isinstance(value, list):
                return value
    raise ConfigError(
        ConfigProblem(
            "a mapping config is a JSON list of rules, or an object with an 'olToPurviewMappings' or 'rules' list"
        )
    )


def _rule_name(rules: list[Any], index: int) -> str | None:
    rule = rules[index] if 0 <= index < len(rules) else None
    name = rule.get("name") if isinstance(rule, dict) else None
    return name if isinstance(name, str) else None


def _field_path(path: list[Any]) -> str | None:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text or None


def schema_problems(rules: list[Any]) -> list[ConfigProblem]:
    """Schema violations, each located by rule index, rule name and field."""
    problems = []
    for error in sorted(_validator().iter_errors(rules), key=lambda e: list(map(str, e.absolute_path))):
        path = list(error.absolute_path)
        located = [(path, error.message)]
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = error.schema.get("properties", {})
            unknown = sorted(k for k in error.instance if k not in allowed and not k.startswith("_"))
            message = f"unknown field (allowed: {', '.join(allowed)}; fields starting with '_' are comments)"
            located = [([*path, name], message) for name in unknown]  # every unknown field, not the first
        for where, message in located:
            index = where[0] if where and isinstance(where[0], int) else None
            field = _field_path(where[1:]) if index is not None else _field_path(where)
            problems.append(
                ConfigProblem(message, index, _rule_name(rules, index) if index is not None else None, field)
            )
    return problems


def compile_rule(index: int, raw: dict[str, Any]) -> tuple[Rule | None, list[ConfigProblem]]:
    """Compile one schema-valid rule; returns the rule (None if any part failed) and every problem found."""
    name = raw["name"]
    problems: list[ConfigProblem] = []
    conditions = []
    for j, cond in enumerate(raw["parserConditions"]):
        try:
            conditions.append(compile_condition(cond["op1"], cond["compare"], cond["op2"]))
        except ConditionError as exc:
            problems.append(ConfigProblem(str(exc), index, name, f"parserConditions[{j}].{exc.field}"))
    try:
        template = parse_template(raw["qualifiedName"], tuple(raw.get("normalize", ())))
    except TemplateError as exc:
        problems.append(ConfigProblem(str(exc), index, name, "qualifiedName"))
        template = None
    if problems or template is None:
        return None, problems
    return Rule(index, name, tuple(conditions), template, raw["purviewDataType"]), []


def compile_schema_valid(rules: list[Any], schema: list[ConfigProblem]) -> tuple[tuple[Rule, ...], list[ConfigProblem]]:
    """Compile every rule that has no schema problem of its own (none when the list itself is invalid): the rules
    that compiled and the compilation problems, so that one rule's schema error hides nothing about the others."""
    if any(problem.rule_index is None for problem in schema):
        return (), []
    invalid = {problem.rule_index for problem in schema}
    compiled, problems = [], []
    for index, raw in enumerate(rules):
        if index in invalid:
            continue
        rule, found = compile_rule(index, raw)
        problems.extend(found)
        if rule is not None:
            compiled.append(rule)
    return tuple(compiled), problems


def check_rules(rules: list[Any]) -> tuple[tuple[Rule, ...], list[ConfigProblem]]:
    """Validate and compile; returns the rules that compiled and every problem (schema and compilation, of every
    rule)."""
    schema = schema_problems(rules)
    compiled, problems = compile_schema_valid(rules, schema)
    return compiled, sorted([*schema, *problems], key=lambda p: (p.rule_index is not None, p.rule_index or 0))


def compile_rules(rules: list[Any]) -> tuple[Rule, ...]:
    """Compiled rules, or ConfigError with every problem."""
    compiled, problems = check_rules(rules)
    if problems:
        raise ConfigError(problems)
    return compiled
