"""Many runs' LineagePlans into few bulk requests: pure functions over plans, no I/O.

The live path writes one run per request. A backfill writes thousands of runs, which mostly share their owners and
datasets, so it packs the plans of many runs into one plan per request:

- `pack_plans` groups plans so that a group's distinct entities stay within the bulk size (a plan is never split
  over two groups, so every process travels with the datasets and owners it references);
- `combine_plans` makes one plan of a group: every entity once (by typeName and qualifiedName, the first plan's
  version kept), new placeholder guids `-1`, `-2`... unique in the request, and every reference pointing at the
  entity's new placeholder;
- `with_versions` puts one chosen version of shared entities into a plan (a backfill chooses the newest run's), so
  that every request writing a shared entity writes the same content, whatever order the requests run in.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

from olparser.jsontypes import JSON

from .entities import Key, assign_guids, key_of
from .plan import LineagePlan

T = TypeVar("T")


def without_placeholders(value: Any) -> Any:
    """`value` with every placeholder guid ("-N") removed: references keep their typeName and uniqueAttributes."""
    if isinstance(value, dict):
        return {
            k: without_placeholders(v)
            for k, v in value.items()
            if not (k == "guid" and isinstance(v, str) and v.startswith("-"))
        }
    if isinstance(value, list):
        return [without_placeholders(v) for v in value]
    return value


def entity_content(entity: JSON) -> str:
    """Canonical JSON of an entity without placeholder guids: equal for equal content in any plan."""
    return json.dumps(without_placeholders(entity), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def plan_keys(plan: LineagePlan) -> set[Key]:
    """(typeName, qualifiedName) of everything the plan writes or references as an external dataset."""
    return {key_of(e) for e in (*plan.entities, *plan.external_datasets)}


def combine_plans(plans: Sequence[LineagePlan]) -> LineagePlan:
    """One plan that writes what every plan in `plans` writes, each entity once (the first version met)."""
    return plans[0] if len(plans) == 1 else _assembled(plans, lambda entity: entity)


def pack_plans(items: Iterable[T], max_entities: int, plan_of: Callable[[T], LineagePlan]) -> Iterator[list[T]]:
    """Consecutive groups of `items` whose plans together hold at most `max_entities` distinct entities; a plan
    larger than that on its own forms its own group (the uploader splits it). Plans with nothing to write are
    left out."""
    if max_entities < 1:
        raise ValueError("max_entities must be at least 1")
    group: list[T] = []
    keys: set[Key] = set()
    for item in items:
        item_keys = plan_keys(plan_of(item))
        if not item_keys:
            continue
        if group and len(keys | item_keys) > max_entities:
            yield group
            group, keys = [], set()
        group.append(item)
        keys |= item_keys
    if group:
        yield group


def with_versions(plan: LineagePlan, versions: Mapping[Key, JSON]) -> LineagePlan:
    """The plan with each entity named in `versions` replaced by that version, its references pointing at the plan's
    placeholders."""
    if not any(key_of(e) in versions for e in (*plan.entities, *plan.external_datasets)):
        return plan
    return _assembled([plan], lambda entity: versions.get(key_of(entity), entity))


def _assembled(plans: Sequence[LineagePlan], version: Callable[[JSON], JSON]) -> LineagePlan:
    """The plans' entities (each in the chosen `version`) renumbered together: external datasets first, every key
    once (the first met), placeholders unique, references completed with their target's placeholder."""
    external_keys = {key_of(e) for plan in plans for e in plan.external_datasets}
    external = [without_placeholders(version(e)) for plan in plans for e in plan.external_datasets]
    owned = [
        without_placeholders(version(e)) for plan in plans for e in plan.entities if key_of(e) not in external_keys
    ]
    ordered = assign_guids([external, owned])
    return LineagePlan(
        entities=tuple(e for e in ordered if key_of(e) not in external_keys),
        external_datasets=tuple(e for e in ordered if key_of(e) in external_keys),
        unmatched=tuple(
            sorted({u for plan in plans for u in plan.unmatched}, key=lambda u: (u.namespace, u.name, u.reason))
        ),
        notes=tuple(dict.fromkeys(note for plan in plans for note in plan.notes)),
        datasets=tuple(dict.fromkeys(d for plan in plans for d in plan.datasets)),
        interim=tuple(sorted({k for plan in plans for k in plan.interim})),
    )
