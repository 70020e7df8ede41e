"""Dropping malformed facets: a facet the connector reads that breaks its contract is removed with a warning, so one
bad facet never costs the whole event; any facet that is not a JSON object is removed the same way."""

from __future__ import annotations

from typing import Any, Iterable

from olparser.contract.errors import json_path
from olparser.contract.schema import ContractValidators
from olparser.contract.strip import facet_maps

MAX_FACET_WARNINGS = 20  # one warning per dropped facet up to this many, then one line counting the rest


def facet_group(path: tuple[str | int, ...]) -> str:
    """The kind of facet map at `path`: run, job, dataset, inputFacets or outputFacets (see schema.FACET_GROUPS)."""
    if path[-1] != "facets":
        return str(path[-1])
    return str(path[0]) if path[0] in ("run", "job") else "dataset"


def drop_malformed_facets(
    event: dict[str, Any],
    validators: ContractValidators,
    prefix: str = "$",
    control_free: bool = False,
    maps: Iterable[tuple[tuple[str | int, ...], dict[str, Any]]] | None = None,
) -> list[str]:
    """Check every facet the connector reads against its contract; delete the malformed ones in place.

    Returns one warning per facet dropped, e.g.
    "dropped malformed facet $.outputs[0].facets.schema: $.outputs[0].facets.schema.fields must be an array, got a
    number", up to MAX_FACET_WARNINGS, then one warning that counts the others. Each facet costs one fast validation
    that stops at its first error (`control_free`: see CompiledDef.problem). `maps`: the event's facet maps when
    the caller has listed them already.
    """
    warnings: list[str] = []
    dropped = 0
    for path, facets in facet_maps(event) if maps is None else maps:
        read = validators.facets[facet_group(path)]
        for name in list(facets):
            facet = facets[name]
            if type(facet) is not dict:
                problem = "a facet must be a JSON object"
            else:
                validator = read.get(name)
                found = validator.problem(facet, (*path, name), prefix, control_free) if validator is not None else None
                if found is None:
                    continue
                problem = found[0]
            del facets[name]
            dropped += 1
            if dropped <= MAX_FACET_WARNINGS:
                warnings.append(f"dropped malformed facet {json_path((*path, name), prefix)}: {problem}")
    if dropped > MAX_FACET_WARNINGS:
        warnings.append(f"dropped {dropped - MAX_FACET_WARNINGS:,} more malformed facets")
    return warnings
