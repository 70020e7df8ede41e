"""Removing heavy facets the connector never reads (spark.logicalPlan, spark_unknown, debug...) before validation."""

from __future__ import annotations

from typing import Any, Iterable, Iterator

DATASET_LISTS = ("inputs", "outputs")
DATASET_FACET_MAPS = ("facets", "inputFacets", "outputFacets")


def facet_maps(event: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], dict[str, Any]]]:
    """Every facet map of an event with its path: run, job, each input/output dataset (facets, input/output facets)
    and the dataset of a DatasetEvent. Tolerates any shape: parts that are not objects are skipped."""
    for owner in ("run", "job", "dataset"):
        part = event.get(owner)
        if type(part) is dict:
            facets = part.get("facets")
            if type(facets) is dict:
                yield (owner, "facets"), facets
    for list_name in DATASET_LISTS:
        datasets = event.get(list_name)
        if type(datasets) is not list:
            continue
        for index, dataset in enumerate(datasets):
            if type(dataset) is not dict:
                continue
            for map_name in DATASET_FACET_MAPS:
                facets = dataset.get(map_name)
                if type(facets) is dict:
                    yield (list_name, index, map_name), facets


def strip_facets(
    event: dict[str, Any],
    names: tuple[str, ...] | frozenset[str],
    maps: Iterable[tuple[tuple[str | int, ...], dict[str, Any]]] | None = None,
) -> int:
    """Delete the named facets from every facet map of `event` in place (`maps`: those maps when the caller has
    listed them already); return how many were removed."""
    if not names:
        return 0
    removed = 0
    for _path, facets in facet_maps(event) if maps is None else maps:
        for name in names:
            if name in facets:
                del facets[name]
                removed += 1
    return removed
