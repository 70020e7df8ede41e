"""The mapping engine: OpenLineage (namespace, name) → Purview (qualifiedName, type), by the first rule that matches.

Rules compile once when the config loads. The first time a namespace is seen, every rule is specialised to it (a
"plan"): conditions that read only namespace tokens are decided, and namespace tokens are filled into the template;
rules that cannot match that namespace drop out. Per call: DBFS paths are made canonical and `/mnt` paths resolved
against the mount points, the name is tokenised (cached), and the namespace's plan is tried in config order. A rule
matches when all its conditions hold and its template can be filled. `map` never raises on data: no match is a
MappingResult with `error` set. `explain` walks the unspecialised rules and must agree with `map`.

JDBC URLs: a namespace such as `jdbc:postgresql://host:5432/db` is first mapped as sent (so a rule written for the
`jdbc:` form wins), and only when no rule matches it, again as its plain form without `jdbc:`
(`postgresql://host:5432/db`), which the rules for the plain form then map; `explain` shows both attempts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence, Union

from olparser.settings import Settings

from .mounts import DBFS_NAMESPACES, MountIndex, MountMemo, MountPoint, canonical_dbfs, resolve_mount
from .rules import ConfigError, Rule, compile_rules, parse_json, read_path, unwrap
from .stores import store_note
from .templates import NORMALIZERS
from .tokens import NamespaceTokens, NameTokens, TokenRef, Value, token_table, tokenize_name, tokenize_namespace

_NO_NAME = NameTokens((), ())
JDBC_PREFIX = "jdbc:"


def plain_jdbc_form(namespace: str) -> str | None:
    """`jdbc:sqlserver://h:1433;databaseName=db` -> `sqlserver://h:1433;databaseName=db`; None for other namespaces."""
    if namespace[:5].lower() == JDBC_PREFIX and len(namespace) > 5:
        return namespace[5:]
    return None


@dataclass(frozen=True)
class MappingResult:
    qualified_name: str | None
    purview_type: str | None
    rule_name: str | None
    error: str | None = None

    @property
    def matched(self) -> bool:
        return self.qualified_name is not None


@dataclass(frozen=True)
class ConditionTrace:
    op1: str
    compare: str
    op2: object
    held: bool | None  # None: not evaluated (an earlier condition failed)
    reason: str


@dataclass(frozen=True)
class RuleTrace:
    index: int
    name: str
    conditions: tuple[ConditionTrace, ...]
    matched: bool
    reason: str


@dataclass(frozen=True)
class Explanation:
    """How one input was mapped: the input after mount resolution, its tokens, each rule tried and the result."""

    namespace: str
    name: str
    resolved_namespace: str
    resolved_name: str
    mount: MountPoint | None
    tokens: dict[str, object]
    rules: tuple[RuleTrace, ...]
    result: MappingResult
    # A `jdbc:` namespace that no rule matched as sent is tried again without `jdbc:`: that attempt, explained.
    plain_form: "Explanation | None" = None

    def to_text(self) -> str:
        lines = [f"namespace: {self.namespace!r}", f"name: {self.name!r}"]
        if self.mount is not None:
            lines.append(f"mount: {self.mount.mount_point!r} -> {self.mount.source!r}")
        if (self.resolved_namespace, self.resolved_name) != (self.namespace, self.name):
            lines.append(f"resolved: namespace {self.resolved_namespace!r}, name {self.resolved_name!r}")
        lines.append("tokens:")
        lines.extend(f"  {key} = {value!r}" for key, value in self.tokens.items())
        lines.append("rules:")
        for rule in self.rules:
            lines.append(f"  [{rule.index}] {rule.name}: {'MATCH' if rule.matched else 'no'} - {rule.reason}")
            for c in rule.conditions:
                mark = {True: "held", False: "FAILED", None: "not evaluated"}[c.held]
                lines.append(f"      {c.op1} {c.compare} {c.op2!r}: {mark}" + (f" ({c.reason})" if c.reason else ""))
        if self.plain_form is not None:
            lines.append(
                f"no rule matched the jdbc: namespace as sent; tried again as its plain form "
                f"{self.plain_form.namespace!r}:"
            )
            lines.extend("  " + line for line in self.plain_form.to_text().splitlines()[:-1])
        r = self.result
        if r.matched:
            lines.append(f"winner: {r.rule_name} -> {r.qualified_name} ({r.purview_type})")
        else:
            lines.append(f"winner: none - {r.error}")
        return "\n".join(lines)


_PLAN_CACHE_SIZE = 4096
RESULT_CACHE_SIZE = 8192  # mapping results kept per engine, by (namespace, name, workspace url)
CACHED_CHARS = 512  # a longer namespace + name is mapped every time: the cache stays a few MB whatever is sent

# (checks that depend on the name or workspace url, template pieces with namespace tokens filled in, normalisers, rule)
PlannedRule = tuple[
    tuple[Callable[..., bool], ...], tuple[Union[str, Callable[..., Value]], ...], tuple[Any, ...], Rule
]


def plan_rule(rule: Rule, ns: NamespaceTokens) -> PlannedRule | None:
    """The rule specialised to one namespace, or None when a namespace condition fails or a namespace token is missing."""
    for c in rule.conditions:
        if c.token.scope == "namespace" and not c.check(ns, _NO_NAME, None):
            return None
    pieces: list[str | Callable[..., Value]] = []
    for piece in rule.template.pieces:
        if isinstance(piece, TokenRef) and piece.scope == "namespace":
            value = piece.read(ns, _NO_NAME, None)
            if value is None:
                return None
            piece = str(value)
        if isinstance(piece, str):
            if pieces and isinstance(pieces[-1], str):
                pieces[-1] += piece
            else:
                pieces.append(piece)
        else:
            pieces.append(piece.read)
    steps = rule.template.normalizers
    if steps and steps[0] is NORMALIZERS["lowercaseSchemeHost"] and pieces and isinstance(pieces[0], str):
        head = pieces[0]
        scheme = head.find("://")
        if scheme >= 0 and head.find("/", scheme + 3) >= 0:  # scheme and host are all in the filled first piece
            pieces[0], steps = steps[0](head), steps[1:]
    checks = tuple(c.check for c in rule.conditions if c.token.scope != "namespace")
    return checks, tuple(pieces), steps, rule


def _clean_workspace_url(url: str | None) -> str | None:
    if not url:
        return None
    if "/" in url:
        url = url.split("://", 1)[-1].strip("/")
    return url or None


class RuleSource(Protocol):
    """Where a plan's rules come from: a `MappingEngine`, or a rule file followed as it changes
    (olparser/adapters/rules_file.py). A plan takes one `snapshot` and builds with it throughout, so that a reload
    in the middle never gives one plan two rule sets."""

    def snapshot(self) -> "MappingEngine": ...


class MappingEngine:
    """An ordered, compiled rule list. Build it with one of the `from_*` constructors."""

    def __init__(self, rules: tuple[Rule, ...]):
        self.rules = rules
        self._plans: dict[str, tuple[NamespaceTokens, tuple[PlannedRule, ...]]] = {}
        # Results by (namespace, name, workspace url), the namespace and name after mount resolution. Bounded
        # (emptied when full); a reloaded rule file makes a new engine, so results never outlive their rules.
        self._results: dict[tuple[str, str, str | None], MappingResult] = {}
        # The datasets the lineage build made from this engine's answers (olparser/lineage/datasets.py keeps them and
        # bounds them): they go with the rules, as the results do.
        self.datasets_met: dict[tuple[Any, ...], tuple[Any, Any]] = {}
        self.mount_memo = MountMemo()  # the mount lists its runs send, read and indexed once

    def snapshot(self) -> "MappingEngine":
        """The rules for one plan (`RuleSource`): this engine, whose rules never change."""
        return self

    # --- construction ---------------------------------------------------------------------------------------------
    @classmethod
    def from_rules(cls, rules: list[dict[str, Any]]) -> "MappingEngine":
        return cls(compile_rules(rules))

    @classmethod
    def from_json_text(cls, text: str) -> "MappingEngine":
        return cls.from_rules(unwrap(parse_json(text, "the mapping config")))

    @classmethod
    def from_path(cls, path: str | Path) -> "MappingEngine":
        return cls.from_rules(unwrap(read_path(path)))

    @classmethod
    def from_settings(cls, settings: Settings) -> "MappingEngine":
        """The inline app setting `OlToPurviewMappings` wins; else the file at `mappings_path`."""
        if settings.mappings_inline and settings.mappings_inline.strip():
            try:
                return cls.from_json_text(settings.mappings_inline)
            except ConfigError as exc:
                where = "app setting OlToPurviewMappings: "
                raise ConfigError([replace(p, message=where + p.message) for p in exc.problems]) from None
        return cls.from_path(settings.mappings_path)

    # --- mapping ----------------------------------------------------------------------------------------------------
    def _plan(self, namespace: str) -> tuple[NamespaceTokens, tuple[PlannedRule, ...]]:
        """The rules that can still match inputs with this namespace, namespace-only work done (cached per namespace)."""
        plan = self._plans.get(namespace)
        if plan is None:
            ns = tokenize_namespace(namespace)
            plan = (ns, tuple(p for p in (plan_rule(rule, ns) for rule in self.rules) if p is not None))
            if len(self._plans) >= _PLAN_CACHE_SIZE:
                self._plans.clear()
            self._plans[namespace] = plan
        return plan

    def _prepare(
        self, namespace: str, name: str, mounts: Sequence[MountPoint] | MountIndex
    ) -> tuple[str, str, MountPoint | None]:
        if namespace in DBFS_NAMESPACES:
            namespace, name = canonical_dbfs(namespace, name)
            if name.startswith("/mnt/") and mounts:
                mounts = self.mount_memo.index(mounts)  # a run's tuple is indexed once
            resolved = resolve_mount(name, mounts)
            if resolved is not None:
                return resolved
        return namespace, name, None

    def map(
        self,
        namespace: str,
        name: str,
        *,
        mounts: Sequence[MountPoint] | MountIndex = (),
        workspace_url: str | None = None,
        _retry_jdbc: bool = True,
    ) -> MappingResult:
        """The first matching rule's qualifiedName and type; unmatched results carry `error`. A `jdbc:` namespace that
        no rule matches is mapped once more as its plain form (`_retry_jdbc` is that attempt's guard)."""
        if namespace.__class__ is not str or name.__class__ is not str:
            namespace, name = ("" if v is None else str(v) for v in (namespace, name))
        if namespace in DBFS_NAMESPACES:
            namespace, name, _ = self._prepare(namespace, name, mounts)
        if not _retry_jdbc or len(namespace) + len(name) > CACHED_CHARS:
            return self._map(namespace, name, workspace_url, _retry_jdbc)
        key = (namespace, name, workspace_url)
        result = self._results.get(key)
        if result is None:
            result = self._map(namespace, name, workspace_url, True)
            if len(self._results) >= RESULT_CACHE_SIZE:
                self._results.clear()
            self._results[key] = result
        return result

    def _map(self, namespace: str, name: str, workspace_url: str | None, retry_jdbc: bool) -> MappingResult:
        """`map` after mount resolution, without the cache."""
        ws = _clean_workspace_url(workspace_url) if workspace_url else None
        ns, planned = self._plan(namespace)
        nm = tokenize_name(name)
        near_miss = None
        for checks, pieces, steps, rule in planned:
            for check in checks:
                if not check(ns, nm, ws):
                    break
            else:
                out = []
                for piece in pieces:
                    if piece.__class__ is str:
                        out.append(piece)
                        continue
                    # Not a str here: the hot path's `__class__ is str` (faster than isinstance) does not narrow the type.
                    value = piece(ns, nm, ws)  # type: ignore[operator]
                    if value is None:
                        near_miss = near_miss or rule
                        break
                    out.append(value if value.__class__ is str else str(value))
                else:
                    text = "".join(out)
                    for step in steps:
                        text = step(text)
                    return MappingResult(text.rstrip("/"), rule.purview_type, rule.name)
        reason = self._unmatched_reason(ns, nm, ws, near_miss)
        if retry_jdbc and namespace[:5].lower() == JDBC_PREFIX:
            plain = plain_jdbc_form(namespace)
            if plain is not None:
                retried = self.map(plain, name, workspace_url=ws, _retry_jdbc=False)
                if retried.matched:
                    return retried
                reason += f"; nor as its plain form without 'jdbc:': {retried.error}"
        return MappingResult(None, None, None, reason)

    def _unmatched_reason(self, ns: NamespaceTokens, nm: NameTokens, ws: str | None, near_miss: Rule | None) -> str:
        reason = f"no mapping rule matched (namespace prefix {ns.prefix[:80]!r}, {len(self.rules)} rules tried)"
        note = store_note(ns.prefix) if near_miss is None else None
        if note is not None:
            reason += f"; {note}"
        if near_miss is not None:
            missing = near_miss.template.missing_token(ns, nm, ws)
            reason += (
                f"; the conditions of rule '{near_miss.name}' held but its template reads {missing}, which is missing"
            )
        return reason

    def explain(
        self,
        namespace: str,
        name: str,
        *,
        mounts: Sequence[MountPoint] | MountIndex = (),
        workspace_url: str | None = None,
        _retry_jdbc: bool = True,
    ) -> Explanation:
        """Tokens, and for each rule in order (up to the winner) which condition held or failed and why; for a `jdbc:`
        namespace that no rule matched, the same for its plain form (`plain_form`)."""
        original = ("" if namespace is None else str(namespace), "" if name is None else str(name))
        resolved_ns, resolved_name, mount = self._prepare(*original, mounts)
        ws = _clean_workspace_url(workspace_url)
        ns, nm = tokenize_namespace(resolved_ns), tokenize_name(resolved_name)
        traces = []
        result = None
        for rule in self.rules:
            trace = self._trace(rule, ns, nm, ws)
            traces.append(trace)
            if trace.matched:
                result = MappingResult(rule.template.render(ns, nm, ws), rule.purview_type, rule.name)
                break
        plain_form = None
        if result is None:
            plain = plain_jdbc_form(resolved_ns) if _retry_jdbc else None
            if plain is not None:
                plain_form = self.explain(plain, resolved_name, workspace_url=ws, _retry_jdbc=False)
            result = self.map(resolved_ns, resolved_name, workspace_url=ws)
        return Explanation(
            *original, resolved_ns, resolved_name, mount, token_table(ns, nm, ws), tuple(traces), result, plain_form
        )

    @staticmethod
    def _trace(rule: Rule, ns: NamespaceTokens, nm: NameTokens, ws: str | None) -> RuleTrace:
        conditions: list[ConditionTrace] = []
        failed = False
        for c in rule.conditions:
            if failed:
                conditions.append(ConditionTrace(c.op1, c.compare, c.op2, None, ""))
                continue
            _value, held, why = c.explain(ns, nm, ws)
            conditions.append(ConditionTrace(c.op1, c.compare, c.op2, held, why))
            failed = not held
        if failed:
            failing = next(t for t in conditions if t.held is False)
            reason = f"condition failed: {failing.op1} {failing.compare} {failing.op2!r} ({failing.reason})"
            return RuleTrace(rule.index, rule.name, tuple(conditions), False, reason)
        missing = rule.template.missing_token(ns, nm, ws)
        if missing is not None:
            reason = f"conditions held, but the template reads {missing}, which does not exist"
            return RuleTrace(rule.index, rule.name, tuple(conditions), False, reason)
        return RuleTrace(rule.index, rule.name, tuple(conditions), True, "all conditions held")
