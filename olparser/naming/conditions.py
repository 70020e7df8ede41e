"""Rule conditions `{op1: TOKEN, compare: OP, op2: LITERAL}`, compiled once into small closures.

Operators (all case-sensitive unless the name says otherwise; a condition that reads a missing token is false):
  =  !=                     equal / not equal (op2 may be a list: equal to any / to none of them)
  contains  notcontains     substring present / absent (op2 may be a list: any / none)
  icontains                 substring present, ignoring case (op2 may be a list: any)
  startswith  endswith      prefix / suffix (op2 may be a list: any)
  contains-in               the reference's form: op2 is `a|b|c`, true when the value contains any of them
  >  <                      numbers; a bare list token (e.g. `nameGroups`) reads as its length
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .tokens import NamespaceTokens, NameTokens, TokenRef, Value, parse_token

Test = Callable[[Value], bool]

OPERATORS = ("=", "!=", "contains", "notcontains", "icontains", "startswith", "endswith", "contains-in", ">", "<")


class ConditionError(ValueError):
    """A condition that cannot compile (bad operand for its operator); `field` is op1, compare or op2."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def _text(literal: object) -> str:
    if isinstance(literal, float) and literal.is_integer():
        return str(int(literal))
    return str(literal)


def _texts(op2: object) -> tuple[str, ...]:
    return tuple(_text(x) for x in op2) if isinstance(op2, list) else (_text(op2),)


def _number(op2: object) -> float:
    if isinstance(op2, (int, float)) and not isinstance(op2, bool):
        return float(op2)
    try:
        return float(str(op2).strip())
    except ValueError:
        raise ConditionError("op2", f"'{op2}' is not a number (needed by > and <)") from None


def _as_number(value: Value) -> float | None:
    if value.__class__ is int:
        return value
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _string_test(compare: str, op2: object) -> Callable[[str], bool]:
    options = _texts(op2)
    single = options[0] if len(options) == 1 else None
    if compare == "=":
        return (lambda v: v == single) if single is not None else (lambda v: v in options)
    if compare == "!=":
        return (lambda v: v != single) if single is not None else (lambda v: v not in options)
    if compare == "contains":
        return (lambda v: single in v) if single is not None else (lambda v: any(o in v for o in options))
    if compare == "notcontains":
        return lambda v: not any(o in v for o in options)
    if compare == "icontains":
        lowered = tuple(o.lower() for o in options)
        return lambda v: any(o in v.lower() for o in lowered)
    if compare == "startswith":
        return lambda v: v.startswith(options)
    if compare == "endswith":
        return lambda v: v.endswith(options)
    items = tuple(o for text in options for o in text.split("|") if o)  # contains-in
    return lambda v: any(o in v for o in items)


def _numeric_test(compare: str, op2: object) -> Test:
    if isinstance(op2, list):
        raise ConditionError("op2", f"{compare} takes one number, not a list")
    limit = _number(op2)

    def test(v: Value) -> bool:
        number = _as_number(v)
        return number is not None and (number > limit if compare == ">" else number < limit)

    return test


@dataclass(frozen=True)
class Condition:
    op1: str
    compare: str
    op2: object
    token: TokenRef
    test: Test
    check: Callable[[NamespaceTokens, NameTokens, "str | None"], bool]

    def explain(self, ns: NamespaceTokens, nm: NameTokens, ws: str | None) -> tuple[Value, bool, str]:
        """(value read, held, what was read) for one input."""
        value = self.token.read(ns, nm, ws)
        if value is None:
            return None, False, f"{self.op1} does not exist"
        shown = value if self.compare in (">", "<") or not self.token.is_count else str(value)
        return value, self.test(shown), f"{self.op1} is {value!r}"


def compile_condition(op1: str, compare: str, op2: object) -> Condition:
    """Compile one condition; raises ConditionError (field op1, compare or op2) or TokenError via op1."""
    try:
        token = parse_token(op1)
    except ValueError as exc:
        raise ConditionError("op1", str(exc)) from None
    if compare not in OPERATORS:
        raise ConditionError("compare", f"unknown operator '{compare}' (known: {', '.join(OPERATORS)})")
    numeric = compare in (">", "<")
    if numeric:
        test = _numeric_test(compare, op2)
    else:
        # A string test is given only strings: a token other than a count reads a str, a count is passed as str.
        test = _string_test(compare, op2)  # type: ignore[assignment]
    read = token.read
    if token.is_count and not numeric:

        def check(ns: NamespaceTokens, nm: NameTokens, ws: str | None) -> bool:
            value = read(ns, nm, ws)
            return value is not None and test(str(value))

    elif op1 == "prefix" and compare == "=" and not isinstance(op2, list):
        literal = _text(op2)

        def check(ns: NamespaceTokens, nm: NameTokens, ws: str | None) -> bool:
            return ns.prefix == literal

    else:

        def check(ns: NamespaceTokens, nm: NameTokens, ws: str | None) -> bool:
            value = read(ns, nm, ws)
            return value is not None and test(value)

    return Condition(op1, compare, op2, token, test, check)
