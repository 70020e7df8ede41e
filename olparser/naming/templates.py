"""Qualified-name templates: literal text with `{token}` placeholders, parsed once by a small grammar.

Grammar: `{{` and `}}` are literal braces; `{ TOKEN }` is a placeholder (see tokens.parse_token); any other brace is an
error. Rendering fills the placeholders, applies the rule's normalisation steps and trims trailing `/` (as the
reference does). A placeholder that reads a missing token makes the whole template yield None (the rule does not match).
Never `eval`, never `str.format`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .tokens import NamespaceTokens, NameTokens, TokenError, TokenRef, parse_token


class TemplateError(ValueError):
    """A template that does not parse; the message names the position."""


def _lowercase_scheme_host(text: str) -> str:
    start = text.find("://")
    if start < 0:
        return text
    end = text.find("/", start + 3)
    end = len(text) if end < 0 else end
    return text[:end].lower() + text[end:]


_SLASH_RUN = re.compile(r"/{2,}")


def _collapse_slashes(text: str) -> str:
    start = text.find("://")
    head, rest = (text[: start + 3], text[start + 3 :]) if start >= 0 else ("", text)
    return head + _SLASH_RUN.sub("/", rest)


# Optional per-rule `normalize` steps, applied in the order given, after filling and before the trailing-`/` trim.
NORMALIZERS: dict[str, Callable[[str], str]] = {
    "lowercase": str.lower,
    "lowercaseSchemeHost": _lowercase_scheme_host,
    "collapseSlashes": _collapse_slashes,
}


@dataclass(frozen=True)
class Template:
    text: str
    pieces: tuple[str | TokenRef, ...]
    normalizers: tuple[Callable[[str], str], ...] = ()

    @property
    def tokens(self) -> tuple[TokenRef, ...]:
        return tuple(p for p in self.pieces if isinstance(p, TokenRef))

    def render(self, ns: NamespaceTokens, nm: NameTokens, ws: str | None) -> str | None:
        """The filled template, or None when a placeholder reads a missing token."""
        out = []
        for piece in self.pieces:
            if piece.__class__ is str:
                out.append(piece)
                continue
            # A TokenRef here: the hot path's `__class__ is str` (faster than isinstance) does not narrow the type.
            value = piece.read(ns, nm, ws)  # type: ignore[union-attr]
            if value is None:
                return None
            out.append(value if value.__class__ is str else str(value))
        text = "".join(out)
        for step in self.normalizers:
            text = step(text)
        return text.rstrip("/")

    def missing_token(self, ns: NamespaceTokens, nm: NameTokens, ws: str | None) -> str | None:
        """The first placeholder that reads a missing token (for explanations)."""
        for ref in self.tokens:
            if ref.read(ns, nm, ws) is None:
                return ref.text
        return None


def parse_template(text: str, normalize: tuple[str, ...] = ()) -> Template:
    """Parse a template once; raises TemplateError naming the position and the problem."""
    pieces: list[str | TokenRef] = []
    literal: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "{":
            if text.startswith("{{", i):
                literal.append("{")
                i += 2
                continue
            end = text.find("}", i + 1)
            nested = text.find("{", i + 1)
            if end < 0:
                raise TemplateError(f"unclosed '{{' at position {i}")
            if 0 <= nested < end:
                raise TemplateError(f"'{{' inside a placeholder at position {nested}")
            try:
                ref = parse_token(text[i + 1 : end])
            except TokenError as exc:
                raise TemplateError(f"placeholder at position {i}: {exc}") from None
            if literal:
                pieces.append("".join(literal))
                literal = []
            pieces.append(ref)
            i = end + 1
        elif ch == "}":
            if text.startswith("}}", i):
                literal.append("}")
                i += 2
                continue
            raise TemplateError(f"unmatched '}}' at position {i} (write '}}}}' for a literal brace)")
        else:
            literal.append(ch)
            i += 1
    if literal:
        pieces.append("".join(literal))
    return Template(text, tuple(pieces), tuple(NORMALIZERS[name] for name in normalize))
