"""Purview's resource-set rule configuration, parsed: the account's `resourceSetRuleConfigs` body (or the shipped
default, `default_resource_set_rule_config.json` beside this module) → `ResourceSetRules` — the .NET regex replacers
with their options and conditions, the accepted and rejected path filters, the scoped pattern rules. What the rules
do to a path is `olparser/resolution/resource_sets.py`'s. Pure: no I/O beyond reading the shipped default once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import regex

from olparser.jsontypes import JSON

DEFAULT_CONFIG_PATH = Path(__file__).with_name("default_resource_set_rule_config.json")

SPARK_PATH_REPLACER = "Microsoft.DataMap.PathPattern.SparkPathReplacer"
DATE_IN_PATH_REPLACER = "Microsoft.DataMap.PathPattern.DatePatternPathReplacer"
APPLY_TO_FILE_NAME = "ApplyToFileName"
APPLY_TO_NON_FILE_NAME = "ApplyToNonFileName"
APPLY_TO_FILE_NAME_OR_NON_VERSION = "ApplyToFileNameOrNonVersionString"
_CONDITIONS = (APPLY_TO_FILE_NAME, APPLY_TO_NON_FILE_NAME, APPLY_TO_FILE_NAME_OR_NON_VERSION)

MATCH_TIMEOUT_SECONDS = 0.05  # per regex call: an account's own regexes cannot stall a worker (a timeout = no match)
_NET_IGNORE_CASE, _NET_MULTILINE, _NET_COMPILED, _NET_SINGLELINE, _NET_IGNORE_WHITESPACE, _NET_CULTURE_INVARIANT = (
    1,
    2,
    8,
    16,
    32,
    512,
)
_NET_SUPPORTED_OPTIONS = (
    _NET_IGNORE_CASE
    | _NET_MULTILINE
    | _NET_COMPILED
    | _NET_SINGLELINE
    | _NET_IGNORE_WHITESPACE
    | _NET_CULTURE_INVARIANT
)


# --- configuration -------------------------------------------------------------------------------------------------
def _field(path: str, problem: str) -> ValueError:
    return ValueError(f"resource set rule config: {path}: {problem}")


def _get(obj: JSON, key: str, path: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
    value = obj.get(key, default)
    if value is None:
        return default
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise _field(f"{path}.{key}", f"must be {names}, got {type(value).__name__}")
    return value


def _required(obj: JSON, key: str, path: str) -> str:
    value: str = _get(obj, key, path, str)
    if not value:
        raise _field(f"{path}.{key}", "is required")
    return value


def _list(obj: JSON, key: str, path: str) -> list[JSON]:
    items: list[JSON] = _get(obj, key, path, list, [])
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise _field(f"{path}.{key}[{index}]", f"must be an object, got {type(item).__name__}")
    return items


def _compile_net(pattern: str, options: int, path: str) -> regex.Pattern[str]:
    """A .NET regex (as Purview stores them) as a `regex` pattern: variable-width lookbehind and scoped inline flags
    (`(?i)…(?-i)`) work as in .NET; `options` are .NET RegexOptions bits."""
    if options & ~_NET_SUPPORTED_OPTIONS:
        raise _field(
            f"{path}.options", f"RegexOptions {options} are not supported (ExplicitCapture, RightToLeft, ECMAScript)"
        )
    flags = regex.V1
    flags |= regex.IGNORECASE if options & _NET_IGNORE_CASE else 0
    flags |= regex.MULTILINE if options & _NET_MULTILINE else 0
    flags |= regex.DOTALL if options & _NET_SINGLELINE else 0
    flags |= regex.VERBOSE if options & _NET_IGNORE_WHITESPACE else 0
    try:
        return regex.compile(pattern, flags)
    except (regex.error, ValueError, TypeError) as exc:
        raise _field(f"{path}.regexStr", f"not a valid regex ({exc})") from None


def _regex(obj: JSON, key: str, path: str, *, required: bool) -> tuple[str, int] | None:
    spec = _get(obj, key, path, dict)
    if spec is None:
        if required:
            raise _field(f"{path}.{key}", "is required")
        return None
    source = _required(spec, "regexStr", f"{path}.{key}")
    options = _get(spec, "options", f"{path}.{key}", int, 0)
    _compile_net(source, options, f"{path}.{key}")
    return source, options


def _template(replace_with: str, groups: int, group_index: dict[str, int]) -> tuple[str | int, ...]:
    """.NET substitution syntax as literal text and group numbers: `$n` (the longest number that is a group),
    `${n}` and `${name}`, `$&` (the whole match), `$$`; anything else is literal. Never Python formatting."""
    parts: list[str | int] = []
    text: list[str] = []
    i = 0
    while i < len(replace_with):
        group, width = _group_reference(replace_with, i, groups, group_index)
        if group is None:
            text.append("$" if replace_with.startswith("$$", i) else replace_with[i])
            i += width
            continue
        parts += ["".join(text), group]
        text, i = [], i + width
    parts.append("".join(text))
    return tuple(p for p in parts if p != "")


def _group_reference(text: str, i: int, groups: int, group_index: dict[str, int]) -> tuple[int | None, int]:
    """The group a `$` reference at `i` names and its width; (None, width) for literal text."""
    if text[i] != "$" or i + 1 == len(text):
        return None, 1
    following = text[i + 1]
    if following == "$":
        return None, 2
    if following == "&":
        return 0, 2
    if following == "{":
        end = text.find("}", i + 2)
        name = text[i + 2 : end] if end != -1 else ""
        if name.isdigit() and int(name) <= groups:
            return int(name), end - i + 1
        if name in group_index:
            return group_index[name], end - i + 1
        return None, 1
    digits = regex.match(r"\d+", text[i + 1 :])
    number = digits.group(0) if digits else ""
    while number and int(number) > groups:
        number = number[:-1]
    return (int(number), len(number) + 1) if number else (None, 1)


@dataclass(frozen=True)
class RegexReplacer:
    """One `regexReplacers` entry. Compared by its configuration; the compiled forms are derived."""

    name: str
    pattern: str
    options: int
    replace_with: str
    condition: str | None = None
    keep: tuple[str, int] | None = None  # doNotReplaceRegex: spans it matches are never replaced
    final: bool = False  # disableRecursiveReplacerApplication: no later replacer touches a segment this one changed
    compiled: regex.Pattern[str] = field(init=False, compare=False, repr=False)
    keep_compiled: regex.Pattern[str] | None = field(init=False, compare=False, repr=False)
    substitution: tuple[str | int, ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        compiled = _compile_net(self.pattern, self.options, self.name)
        object.__setattr__(self, "compiled", compiled)
        object.__setattr__(
            self, "keep_compiled", _compile_net(self.keep[0], self.keep[1], self.name) if self.keep else None
        )
        object.__setattr__(
            self, "substitution", _template(self.replace_with, compiled.groups, dict(compiled.groupindex))
        )


@dataclass(frozen=True)
class PathFilter:
    """A `rejectedPatterns`/`acceptedPatterns` entry: a regex, or a wildcard pattern (`*`, `?`) over the whole
    qualifiedName."""

    name: str
    path: str
    is_regex: bool
    compiled: regex.Pattern[str] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.is_regex:
            compiled = _compile_net(self.path, 0, self.name)
        else:
            translated = "".join(".*" if c == "*" else "." if c == "?" else regex.escape(c) for c in self.path)
            compiled = regex.compile(translated, regex.V1 | regex.IGNORECASE)
        object.__setattr__(self, "compiled", compiled)

    def matches(self, qualified_name: str) -> bool:
        matcher = self.compiled.search if self.is_regex else self.compiled.fullmatch
        return safely(lambda: matcher(qualified_name, timeout=MATCH_TIMEOUT_SECONDS)) is not None


# pattern rule replacer types (Learn, "Create resource set pattern rules": available replacement types)
_RULE_TYPES: dict[str, str] = {
    "string": r"[^/]+",
    "int": r"[0-9]+",
    "guid": r"[0-9A-Fa-f]{32}|[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}",
    "date": r"[0-9]{2,4}[-./]?[0-9]{2}[-./]?[0-9]{2,4}",
    "time": r"[0-9]{2}:?[0-9]{2}(?::?[0-9]{2})?",
    "timestamp": r"[0-9]{4}-?[0-9]{2}-?[0-9]{2}T?[0-9]{2}:?[0-9]{2}(?::?[0-9]{2})?",
    "boolean": r"(?i:true|false)",
    "number": r"[0-9]+(?:\.[0-9]+)?|\.[0-9]+",
    "hex": r"[0-9A-Fa-f]+",
    "locale": r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*",
}
_RULE_TOKEN = regex.compile(r"\{\{([^{}:]*):([A-Za-z]+)\}\}|\{([^{}:]*):([A-Za-z]+)\}", regex.V1)


@dataclass(frozen=True)
class PatternRule:
    """One rule of a scoped rule set: `qualifiedName` relative to the scope, with `{name:type}` (generalised to
    `{name}`) and `{{name:type}}` (the matched value kept) groups."""

    name: str
    qualified_name: str
    is_resource_set: bool = True
    compiled: regex.Pattern[str] = field(init=False, compare=False, repr=False)
    output: tuple[tuple[str, str], ...] = field(init=False, compare=False, repr=False)  # (kind, text or group)

    def __post_init__(self) -> None:
        pattern, output, position, index = [], [], 0, 0
        for token in _RULE_TOKEN.finditer(self.qualified_name):
            literal = self.qualified_name[position : token.start()]
            pattern.append(regex.escape(literal))
            output.append(("text", literal))
            static = token.group(1) is not None
            label, kind = (token.group(1), token.group(2)) if static else (token.group(3), token.group(4))
            if kind.lower() not in _RULE_TYPES:
                raise _field(f"rule {self.name}", f"unknown replacer type '{kind}' (one of {sorted(_RULE_TYPES)})")
            index += 1
            pattern.append(f"(?P<g{index}>{_RULE_TYPES[kind.lower()]})")
            output.append(("value", f"g{index}") if static else ("text", f"{{{label}}}"))
            position = token.end()
        pattern.append(regex.escape(self.qualified_name[position:]))
        output.append(("text", self.qualified_name[position:]))
        object.__setattr__(self, "compiled", regex.compile("".join(pattern), regex.V1))
        object.__setattr__(self, "output", tuple(output))

    def apply(self, relative: str) -> str | None:
        match = safely(lambda: self.compiled.fullmatch(relative, timeout=MATCH_TIMEOUT_SECONDS))
        if match is None:
            return None
        return "".join(text if kind == "text" else match.group(text) for kind, text in self.output)


@dataclass(frozen=True)
class ScopedRules:
    """A `scopedRules` entry: the pattern rules that apply under one storage URL."""

    binding_url: str  # without a trailing slash
    rules: tuple[PatternRule, ...]


@dataclass(frozen=True)
class ResourceSetRules:
    """An account's resource-set rules, ready to apply. Build with `default()` or `from_account_config(body)`."""

    replacers: tuple[RegexReplacer, ...]
    spark_paths: bool = True
    dates_in_path: bool = True
    rejected: tuple[PathFilter, ...] = ()
    accepted: tuple[PathFilter, ...] = ()
    scoped: tuple[ScopedRules, ...] = ()  # most specific scope first
    default_patterns: bool = True
    # generalised segments already computed with these rules (folder names repeat across a lake), bounded
    memo: dict[tuple[str, bool], str] = field(default_factory=dict, init=False, compare=False, repr=False)

    @classmethod
    def default(cls) -> "ResourceSetRules":
        """Purview's default rule set (the configuration an account answers before anyone changes it)."""
        return _default_rules()

    @classmethod
    def from_account_config(cls, body: object) -> "ResourceSetRules":
        """The body of `GET https://{account}.purview.azure.com/resourceSetRuleConfigs/defaultResourceSetRuleConfig
        ?api-version=2019-11-01-preview`. Raises ValueError naming the field for an invalid or unreadable body (the
        caller falls back to `default()`)."""
        if not isinstance(body, dict):
            raise _field("body", f"must be a JSON object, got {type(body).__name__}")
        config = _get(body, "pathPatternConfig", "body", dict)
        if config is None:
            raise _field("pathPatternConfig", "is required")
        path = "pathPatternConfig"
        replacers = []
        for index, item in enumerate(_list(config, "regexReplacers", path)):
            where = f"{path}.regexReplacers[{index}]"
            name = _get(item, "name", where, str) or where
            if _get(item, "disabled", where, bool, False):
                continue
            source, options = _regex(item, "regex", where, required=True)  # type: ignore[misc]
            condition = _get(item, "condition", where, str)
            if condition is not None and condition not in _CONDITIONS:
                raise _field(f"{where}.condition", f"unknown condition '{condition}' (one of {list(_CONDITIONS)})")
            replacers.append(
                RegexReplacer(
                    name=name,
                    pattern=source,
                    options=options,
                    replace_with=_get(item, "replaceWith", where, str, ""),
                    condition=condition,
                    keep=_regex(item, "doNotReplaceRegex", where, required=False),
                    final=_get(item, "disableRecursiveReplacerApplication", where, bool, False),
                )
            )
        complex_types = set()
        for index, item in enumerate(_list(config, "complexReplacers", path)):
            where = f"{path}.complexReplacers[{index}]"
            if not _get(item, "disabled", where, bool, False):
                complex_types.add(_get(item, "typeName", where, str))
        return cls(
            replacers=tuple(replacers),
            spark_paths=SPARK_PATH_REPLACER in complex_types,
            dates_in_path=DATE_IN_PATH_REPLACER in complex_types,
            rejected=_filters(config, "rejectedPatterns", path),
            accepted=_filters(config, "acceptedPatterns", path),
            scoped=_scoped_rules(config, path),
            default_patterns=_get(config, "enableDefaultPatterns", path, bool, True),
        )


def _filters(config: JSON, key: str, path: str) -> tuple[PathFilter, ...]:
    filters = []
    for index, item in enumerate(_list(config, key, path)):
        where = f"{path}.{key}[{index}]"
        pattern = _required(item, "path", where)
        kind = _get(item, "filterType", where, str) or _get(item, "type", where, str, "Pattern")
        if kind not in ("Pattern", "Regex"):
            raise _field(f"{where}.filterType", f"must be Pattern or Regex, got '{kind}'")
        if kind == "Regex":
            _compile_net(pattern, 0, where)
        filters.append(PathFilter(name=_get(item, "name", where, str, where), path=pattern, is_regex=kind == "Regex"))
    return tuple(filters)


def _scoped_rules(config: JSON, path: str) -> tuple[ScopedRules, ...]:
    scopes = []
    for index, item in enumerate(_list(config, "scopedRules", path)):
        where = f"{path}.scopedRules[{index}]"
        binding = _required(item, "bindingUrl", where)
        rules = []
        for rule_index, rule in enumerate(_list(item, "rules", where)):
            rule_where = f"{where}.rules[{rule_index}]"
            qualified_name = _required(rule, "qualifiedName", rule_where)
            try:
                rules.append(
                    PatternRule(
                        name=_get(rule, "name", rule_where, str, rule_where),
                        qualified_name=qualified_name.lstrip("/"),
                        is_resource_set=_get(rule, "isResourceSet", rule_where, bool, True),
                    )
                )
            except ValueError as exc:
                raise _field(f"{rule_where}.qualifiedName", str(exc)) from None
        scopes.append(ScopedRules(binding_url=binding.rstrip("/"), rules=tuple(rules)))
    return tuple(sorted(scopes, key=lambda s: -len(s.binding_url)))


def default_account_config() -> JSON:
    """A fresh copy of the default configuration body (what the embedded catalog answers until a PUT replaces it)."""
    config: JSON = json.loads(DEFAULT_CONFIG_PATH.read_text(encoding="utf-8"))
    return config


@lru_cache(maxsize=1)
def _default_rules() -> ResourceSetRules:
    return ResourceSetRules.from_account_config(default_account_config())


def safely(call: Any) -> Any:
    """The call's answer, or None when its regex ran out of time (MATCH_TIMEOUT_SECONDS: no match)."""
    try:
        return call()
    except TimeoutError:
        return None
