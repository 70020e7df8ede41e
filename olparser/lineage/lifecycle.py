"""Tables that come and go: the `lifecycleStateChange` dataset facet (spec `LifecycleStateChangeDatasetFacet`:
`{lifecycleStateChange: ALTER|CREATE|DROP|OVERWRITE|RENAME|TRUNCATE, previousIdentifier: {namespace, name}}`). Pure.

openlineage-spark sends it on the output of DDL statements: `DropTableCommandVisitor` (DROP, the dropped table as
the only output, no input: job `{app}.execute_drop_table_command.{table}`), `AlterTableRenameCommandVisitor`
(RENAME, the new table with `previousIdentifier` = the new location with the old table name in place of the new
one), TRUNCATE and the ALTER visitors (add columns, partitions, set location), all without inputs.

- A run whose every output only changes a table's lifecycle (DROP, RENAME, TRUNCATE, ALTER) and that reads nothing
  moves no data: it is not a process (`is_lifecycle_only`); its plan writes the datasets that still exist.
- `dropped` and `renamed` say what the runner does to what the connector created (olparser/pipeline/lifecycle.py):
  a dropped dataset the connector created (placeholder, interim entity) is deleted, a renamed one moves to its new
  name.
- `lifecycle_changes`: both, resolved to catalog datasets by the run's dataset resolver; the live runner and the
  Spark batch paths hand them to the same function (`olparser.pipeline.apply_lifecycle`).
- Order independence on the live path (`LifecycleMark`): the runs of a queue are processed in any order, so the
  run-state store remembers, per dataset key the connector creates, the newest change of its lifecycle (DROP, or
  RENAME with the key it moves to) and the newest run that wrote it, both by the runs' order (event time, then run
  key). A change stands while no newer run wrote the key (`LifecycleChanges.newer_than`, the rule the batch paths
  apply); after each write the runner applies again what stands on the keys it touched (`standing`): an older run
  whose events arrive after the drop re-creates the entity and the drop deletes it again, an older write of a
  renamed name is moved to the new name, a drop older than the newest write deletes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping

from olparser.runs.marks import Key, LifecycleMark, Order
from olparser.runs.model import DatasetFacts, RunSnapshot

DROP, RENAME = "DROP", "RENAME"
LIFECYCLE_ONLY = frozenset({DROP, RENAME, "TRUNCATE", "ALTER"})


def lifecycle_change(facts: DatasetFacts) -> str | None:
    """The dataset's `lifecycleStateChange` (upper case), or None."""
    facet = facts.facets.get("lifecycleStateChange")
    value = facet.get("lifecycleStateChange") if isinstance(facet, dict) else None
    return value.strip().upper() if isinstance(value, str) and value.strip() else None


def is_lifecycle_only(run: RunSnapshot) -> bool:
    """The run reads nothing and each of its outputs only changes a table's lifecycle: no data moves."""
    return bool(run.outputs) and not run.inputs and all(lifecycle_change(o) in LIFECYCLE_ONLY for o in run.outputs)


def dropped(run: RunSnapshot) -> tuple[DatasetFacts, ...]:
    """The outputs a lifecycle-only run drops."""
    if not is_lifecycle_only(run):
        return ()
    return tuple(o for o in run.outputs if lifecycle_change(o) == DROP)


@dataclass(frozen=True)
class Rename:
    previous: DatasetFacts  # the old identity, with the new one's facets (its table symlink renamed back)
    current: DatasetFacts


def renamed(run: RunSnapshot) -> tuple[Rename, ...]:
    """The outputs a lifecycle-only run renames, each with its previous identity."""
    if not is_lifecycle_only(run):
        return ()
    found = []
    for output in run.outputs:
        previous = _previous_identifier(output) if lifecycle_change(output) == RENAME else None
        if previous is not None and previous != (output.namespace, output.name):
            found.append(Rename(_renamed_back(output, *previous), output))
    return tuple(found)


@dataclass(frozen=True)
class LifecycleChanges:
    """What a lifecycle-only run does to tables, as catalog datasets (`ResolvedDataset`): the datasets it drops,
    and (old, new) for each it renames."""

    drops: tuple[Any, ...] = ()
    moves: tuple[tuple[Any, Any], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.drops or self.moves)

    def keys(self) -> frozenset[Any]:
        """The catalog keys of the datasets dropped and of the names moved away from."""
        return frozenset([*(d.key for d in self.drops), *(old.key for old, _ in self.moves)])

    def newer_than(self, order: Any, written: Any) -> "LifecycleChanges":
        """The changes of a run at `order` that no newer run undoes: `written` maps a dataset key to the order of
        the newest run that writes it; a run that writes the name after the drop or rename creates it anew, so the
        change is left out for that name (a batch applies its changes after all its writes)."""

        def stands(key: Any) -> bool:
            newest = written.get(key)
            return newest is None or newest < order

        return LifecycleChanges(
            tuple(d for d in self.drops if stands(d.key)),
            tuple((old, new) for old, new in self.moves if stands(old.key)),
        )


def lifecycle_changes(run: RunSnapshot, resolver_of: Callable[[RunSnapshot], Any]) -> LifecycleChanges:
    """The run's drops and renames resolved by `resolver_of(run)` (`dataset_resolver`, built only for a run that
    drops or renames something); empty for any other run."""
    drops, renames = dropped(run), renamed(run)
    if not drops and not renames:
        return LifecycleChanges()
    resolver = resolver_of(run)
    return LifecycleChanges(
        tuple(resolver.resolve(facts) for facts in drops),
        tuple((resolver.resolve(r.previous), resolver.resolve(r.current)) for r in renames),
    )


@dataclass(frozen=True)
class Marked:
    """A dataset as a lifecycle mark knows it: its key, and whether its type is the connector's (a placeholder)."""

    key: Key
    owned: bool = False


def lifecycle_marks(
    order: Order, written: Iterable[Key], changes: LifecycleChanges, links: Mapping[Key, Key] | None = None
) -> dict[Key, LifecycleMark]:
    """What a run at `order` tells the store: each dataset key it wrote (`written`: the connector's datasets its plan
    has), and each change it makes (a rename's target linked to its scanned asset by `links`, as applied)."""
    links = links or {}
    marks = {key: LifecycleMark(written_at=order) for key in written}
    for dataset in changes.drops:
        marks[dataset.key] = marks.get(dataset.key, LifecycleMark()).merged(
            LifecycleMark(DROP, order, None, bool(dataset.owned))
        )
    for old, new in changes.moves:
        marks[old.key] = marks.get(old.key, LifecycleMark()).merged(
            LifecycleMark(RENAME, order, links.get(new.key, new.key), bool(old.owned))
        )
    return marks


def standing(marks: Mapping[Key, LifecycleMark]) -> LifecycleChanges:
    """The changes the marks (as the store merged them) say still stand: those no newer run wrote over
    (`LifecycleChanges.newer_than`, the batch paths' rule), to be applied after a write that touched these keys."""
    written = {key: mark.written_at for key, mark in marks.items() if mark.written_at is not None}
    drops: list[Marked] = []
    moves: list[tuple[Marked, Marked]] = []
    for key, mark in sorted(marks.items()):
        if mark.change is None or mark.changed_at is None:
            continue
        dataset = Marked(key, mark.owned)
        change = (
            LifecycleChanges(drops=(dataset,))
            if mark.change == DROP
            else LifecycleChanges(moves=((dataset, Marked(mark.target)),))
            if mark.target is not None
            else LifecycleChanges()
        )
        kept = change.newer_than(mark.changed_at, written)
        drops.extend(kept.drops)
        moves.extend(kept.moves)
    return LifecycleChanges(tuple(drops), tuple(moves))


def kept_outputs(run: RunSnapshot) -> tuple[DatasetFacts, ...]:
    """The outputs of a run that still exist after it (all but those it drops)."""
    gone = set(map(id, dropped(run)))
    return tuple(o for o in run.outputs if id(o) not in gone)


def _previous_identifier(facts: DatasetFacts) -> tuple[str, str] | None:
    facet = facts.facets.get("lifecycleStateChange")
    previous = facet.get("previousIdentifier") if isinstance(facet, dict) else None
    if not isinstance(previous, dict):
        return None
    namespace, name = previous.get("namespace"), previous.get("name")
    if not isinstance(name, str) or not name:
        return None
    return (namespace if isinstance(namespace, str) and namespace else facts.namespace), name


def _renamed_back(current: DatasetFacts, namespace: str, name: str) -> DatasetFacts:
    """The previous identity with the current one's facets, its table symlinks renamed back: the producer derives
    the previous location by putting the old table name in place of the new one, and so do we for the symlink."""
    new_table, old_table = _last_part(current.name), _last_part(name)
    facets: dict[str, Any] = {k: v for k, v in current.facets.items() if k != "lifecycleStateChange"}
    symlinks = facets.get("symlinks")
    if isinstance(symlinks, dict) and isinstance(symlinks.get("identifiers"), list) and new_table and old_table:
        facets["symlinks"] = {
            **symlinks,
            "identifiers": [
                {**i, "name": _replace_last(i["name"], new_table, old_table)}
                if isinstance(i, dict) and isinstance(i.get("name"), str)
                else i
                for i in symlinks["identifiers"]
            ],
        }
    return replace(current, namespace=namespace, name=name, facets=facets)


def _last_part(name: str) -> str:
    return name.rstrip("/").rsplit("/", 1)[-1].rsplit(".", 1)[-1]


def _replace_last(text: str, old: str, new: str) -> str:
    head, found, tail = text.rpartition(old)
    return head + new + tail if found else text
