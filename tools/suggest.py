"""Nearest names: what a command offers when a name it was given is not one it knows (a misspelled qualifiedName for
`ol2purview history`, a column for `ol2purview columns`), so that a typo exits 2 with the names meant, not 0 with an
empty answer. One rule for every command: difflib's closest matches (ratio at least `CUTOFF`), and of those only the
ones about as close as the closest (within `MARGIN`: qualifiedNames share long prefixes, so every name of an account
is somewhat close to a typo of one of them), at most `SHOWN`."""

from __future__ import annotations

import difflib
from typing import Any, Iterable

SHOWN = 3
CUTOFF = 0.6
MARGIN = 0.05
CATALOG_NAMES = 1000  # the datasets read from a catalog to offer names from (one search call)


def nearest(wanted: str, known: Iterable[str], shown: int = SHOWN) -> list[str]:
    """The known names closest to `wanted`, closest first (none when nothing is close)."""
    matcher = difflib.SequenceMatcher(b=wanted, autojunk=False)
    scored = []
    for name in sorted(set(known)):
        matcher.set_seq1(name)
        if matcher.real_quick_ratio() >= CUTOFF and matcher.quick_ratio() >= CUTOFF:
            ratio = matcher.ratio()
            if ratio >= CUTOFF:
                scored.append((-ratio, name))
    scored.sort()
    best = -scored[0][0] if scored else 0.0
    return [name for score, name in scored if -score >= best - MARGIN][:shown]


def offered(wanted: str, known: Iterable[str]) -> str:
    """`; nearest: a, b` for the error line, or "" when no known name is close."""
    names = nearest(wanted, known)
    return f"; nearest: {', '.join(names)}" if names else ""


def catalog_dataset_names(client: Any) -> list[str]:
    """The qualifiedNames of the datasets a catalog holds (one basic search of at most CATALOG_NAMES)."""
    body = client._post_http(  # noqa: SLF001 - the client's own session
        client.endpoint_url + "/search/basic",
        json={"typeName": "DataSet", "query": "*", "limit": CATALOG_NAMES, "excludeDeletedEntities": True},
    ).body
    return [
        name
        for entity in (body or {}).get("entities") or []
        if isinstance(name := (entity.get("attributes") or {}).get("qualifiedName"), str)
    ]
