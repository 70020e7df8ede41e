"""`qn-tester --explain`: the candidates of a dataset, in the order the connector tries them, and with `--catalog
[URL]` which of them the catalog holds and which one the dataset would be linked to.

The dataset is named as the builder names it (qn-tester's `dataset_namer`, the builder's `naming_resolver`); its
candidates come from `olparser.resolution.candidates`, checked by the
connector's own `ScannedAssetResolver` (one lookup per type, a discovery query per search). The catalog is chosen as
`qn-tester lint --catalog` chooses it (tools/qn_lint_catalog.py); its resource-set rules are the account's, else
Purview's defaults. Entities the connector created itself count as found here (the run-state registry is not read).
"""

from __future__ import annotations

import argparse
from typing import Any, Mapping

from olparser.adapters.catalog import CatalogTarget, make_atlas_client, retry_for
from olparser.adapters.catalog.existence import ExistenceCache
from olparser.adapters.catalog.resolver import ResourceSetRuleSource, ScannedAssetResolver
from olparser.catalog_rules import INTERACTIVE
from olparser.resolution.candidates import dataset_candidates
from olparser.resolution.model import Candidate, NamedDataset
from olparser.resolution.resource_sets import ResourceSetRules
from olparser.settings import Settings

from .qn_lint_catalog import CatalogLintError, choose_target


def explain_candidates(
    dataset: NamedDataset, catalog: str | None, env: Mapping[str, str], where: argparse.Namespace | None = None
) -> str:
    """The candidates section of `--explain`; `catalog`: None (offline), "" (the configured catalog) or a URL."""
    resolving = Settings.from_env(env).resolve_scanned_assets
    if catalog is None or not resolving:
        candidates = dataset_candidates(dataset, ResourceSetRules.default())
        why = (
            "no catalog: --catalog [URL] checks them"
            if resolving
            else "resolution is off (RESOLVE_SCANNED_ASSETS=false): the connector links nothing"
        )
        searches = sum(1 for c in candidates if not c.exact)
        return _lines(dataset, candidates, {}, None) + (
            f"\nnot asked: {searches} search(es), {why}" if searches else ""
        )
    target, client, resolver = _catalog_resolver(catalog, env, where)
    try:
        candidates = resolver.candidates(dataset)
        resolution = resolver.resolve([dataset])
        found = {c.key: _answer(c, resolver) for c in candidates}
    except Exception as exc:  # unreachable, refused: one line, exit code 2
        raise _unreachable(target, exc) from None
    finally:
        client.close()
    return _lines(dataset, candidates, found, resolution.links.get(dataset.default), target)


def catalog_links(
    datasets: list[NamedDataset], catalog: str, env: Mapping[str, str], where: argparse.Namespace | None = None
) -> dict[tuple[str, str], tuple[str, str]]:
    """Each dataset's identity written -> the scanned asset (type, qualifiedName) the connector's resolver links it
    to in the catalog chosen (`catalog`: "" for the configured one, or a URL); datasets it finds nothing for are
    left out (written as named, re-linked later)."""
    target, client, resolver = _catalog_resolver(catalog, env, where)
    try:
        links = resolver.resolve(datasets).links
    except Exception as exc:  # unreachable, refused: one line, exit code 2
        raise _unreachable(target, exc) from None
    finally:
        client.close()
    return {d.default: links[d.default] for d in datasets if d.default in links}


def _catalog_resolver(
    catalog: str, env: Mapping[str, str], where: argparse.Namespace | None
) -> tuple[CatalogTarget, Any, ScannedAssetResolver]:
    """The connector's own resolver on the catalog chosen as `qn-tester lint --catalog` chooses it."""
    target = choose_target(catalog or None, env, where)
    client = make_atlas_client(target, timeout=30.0)
    retry = retry_for(INTERACTIVE)
    resolver = ScannedAssetResolver(
        client,
        cache=ExistenceCache(60.0, absent_ttl_seconds=60.0),
        retry=retry,
        rules=ResourceSetRuleSource(client, retry),
    )
    return target, client, resolver


def _unreachable(target: CatalogTarget, exc: Exception) -> CatalogLintError:
    reason = str(exc).splitlines()[0][:300] if str(exc) else ""
    return CatalogLintError(
        f"cannot check the candidates in {target.endpoint}: {type(exc).__name__}{': ' + reason if reason else ''}"
    )


def _answer(candidate: Candidate, resolver: ScannedAssetResolver) -> str:
    if candidate.exact:
        return "exists" if resolver.cache.known([candidate.key]) else "missing"
    match = resolver.resolve_candidates({candidate.key: (candidate,)}).links.get(candidate.key)
    if match:
        return f"found {match[1]}"
    # Why the type error is ignored: a candidate that is not exact has a search
    hits = resolver.search_hits(candidate.search)  # type: ignore[arg-type]
    if not hits:
        return "no hit of that shape"
    return f"{len(hits)} hits of that shape, ambiguous, nothing linked: " + ", ".join(sorted(q for _, q in hits))


def _lines(
    dataset: NamedDataset,
    candidates: tuple[Candidate, ...],
    found: dict[Any, Any],
    linked: tuple[str, str] | None,
    target: CatalogTarget | None = None,
) -> str:
    lines = ["candidates (the first the catalog holds is the asset the lineage links to):"]
    if not candidates:
        lines.append("  none: no scanner registers this dataset under another name")
    for number, candidate in enumerate(candidates, 1):
        kind = "exact " if candidate.exact else "search"
        answer = f"  [{found[candidate.key]}]" if candidate.key in found else ""
        searched = candidate.search.asset_types if candidate.search else ()
        type_name = candidate.type_name or "assetType " + " or ".join(searched)
        lines.append(f"  {number}. {kind} {type_name} {candidate.qualified_name}  ({candidate.origin}){answer}")
    if target is not None:
        where = target.endpoint or target.kind
        if linked is not None:
            lines.append(f"linked in {where}: {linked[0]} {linked[1]}")
        else:
            lines.append(
                f"nothing found in {where}: written as {dataset.default[0]} {dataset.default[1]}"
                + ("; the re-link timer looks again later" if candidates else "")
            )
    return "\n".join(lines)
