"""Azure Functions route templates (ASP.NET Core syntax), compiled to case-insensitive regular expressions.

Supported: literal segments, `{name}`, `{name:constraint}` (int, long, bool, alpha, guid, double, float, decimal),
`{name?}` (optional, whole segment), `{*name}` (catch-all, last segment), and parameters inside a segment
(`file.{ext}`). Route precedence follows ASP.NET: literals before parameters, constrained before free, catch-all last.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PARAM = re.compile(r"\{([^{}]*)\}")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
CONSTRAINTS: dict[str, str] = {
    "int": r"-?\d+",
    "long": r"-?\d+",
    "bool": r"(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])",
    "alpha": r"[A-Za-z]+",
    "guid": r"\{?[0-9A-Fa-f]{8}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{12}\}?",
    "double": _NUMBER,
    "float": _NUMBER,
    "decimal": _NUMBER,
}
# Segment ranks for precedence (lower wins), as in ASP.NET routing.
_LITERAL, _COMPLEX, _CONSTRAINED, _FREE, _CATCH_ALL = 1, 2, 3, 4, 5


class RouteTemplateError(ValueError):
    """A route template this host cannot serve; the message names the template and the problem."""


@dataclass(frozen=True)
class _Param:
    name: str
    pattern: str
    optional: bool
    catch_all: bool


def _parse_param(spec: str, template: str) -> _Param:
    catch_all = spec.startswith("*")
    spec = spec.lstrip("*")
    optional = spec.endswith("?")
    spec = spec.rstrip("?")
    name, _, constraint = spec.partition(":")
    if not _NAME.match(name):
        raise RouteTemplateError(f"route {template!r}: bad parameter name {name!r}")
    if constraint and constraint not in CONSTRAINTS:
        raise RouteTemplateError(
            f"route {template!r}: unsupported constraint {constraint!r} (supported: {', '.join(CONSTRAINTS)})"
        )
    default = ".*" if catch_all else "[^/]+"
    return _Param(name, CONSTRAINTS.get(constraint, default), optional, catch_all)


@dataclass(frozen=True)
class RouteTemplate:
    """One compiled template; `match(path)` gives its route parameters or None."""

    template: str
    regex: re.Pattern[str]
    names: tuple[str, ...]  # route parameter name for each regex group g0, g1, ...
    precedence: tuple[int, ...]

    @classmethod
    def parse(cls, template: str) -> "RouteTemplate":
        segments = [s for s in template.strip("/").split("/")] if template.strip("/") else []
        names: list[str] = []
        parts: list[str] = []
        ranks: list[int] = []
        for index, segment in enumerate(segments):
            sep = "/" if index else ""
            if not segment:
                raise RouteTemplateError(f"route {template!r}: empty segment")
            params = list(_PARAM.finditer(segment))
            if len(params) == 1 and params[0].group(0) == segment:
                param = _parse_param(params[0].group(1), template)
                last = index == len(segments) - 1
                if param.catch_all and not last:
                    raise RouteTemplateError(f"route {template!r}: a catch-all parameter must be the last segment")
                group = f"(?P<g{len(names)}>{param.pattern})"
                names.append(param.name)
                if param.catch_all or param.optional:
                    parts.append(f"(?:{sep}{group})?")
                else:
                    parts.append(sep + group)
                constrained = param.pattern not in ("[^/]+", ".*")
                ranks.append(_CATCH_ALL if param.catch_all else _CONSTRAINED if constrained else _FREE)
                continue
            regex, cursor = sep, 0
            for match in params:
                param = _parse_param(match.group(1), template)
                if param.catch_all or param.optional:
                    raise RouteTemplateError(
                        f"route {template!r}: optional and catch-all parameters must fill a whole segment"
                    )
                regex += re.escape(segment[cursor : match.start()]) + f"(?P<g{len(names)}>{param.pattern})"
                names.append(param.name)
                cursor = match.end()
            rest = segment[cursor:]
            if "{" in rest or "}" in rest:
                raise RouteTemplateError(f"route {template!r}: unbalanced brace in segment {segment!r}")
            parts.append(regex + re.escape(rest))
            ranks.append(_COMPLEX if params else _LITERAL)
        if len(set(n.lower() for n in names)) != len(names):
            raise RouteTemplateError(f"route {template!r}: a parameter name is used twice")
        pattern = re.compile("^" + "".join(parts) + "$", re.IGNORECASE | re.DOTALL)
        return cls(template, pattern, tuple(names), tuple(ranks))

    def match(self, path: str) -> dict[str, str] | None:
        """Route parameters when `path` (with or without surrounding slashes) fits this template, else None."""
        found = self.regex.match(path.strip("/"))
        if found is None:
            return None
        return {self.names[int(group[1:])]: value for group, value in found.groupdict().items() if value is not None}


def full_template(route_prefix: str, route: str) -> str:
    """The template a function answers on: host.json's route prefix joined to the function's route."""
    return "/".join(part.strip("/") for part in (route_prefix, route) if part.strip("/"))
