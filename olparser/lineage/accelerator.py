"""Taking over what Microsoft's C# accelerator (Purview-ADB-Lineage-Solution-Accelerator) wrote: recognising its
entities and deciding what becomes of each. Pure: the estate comes in as plain data (read by
olparser/pipeline/accelerator.py), the plan goes out; `ol2purview migrate accelerator` prints it and `--apply`
carries it out.

What the accelerator left (its source, `Function.Domain/Helpers/parser/DatabricksToPurviewParser.cs` and
`Services/PurviewIngestion.cs`), and what becomes of it:

- workspaces, notebooks, jobs and job tasks, of Purview's built-in types: the connector names them as the accelerator
  did (olparser/lineage/owners.py) and writes with them from then on: **taken over**, left as they are now;
- one `databricks_process` per notebook or task and combination of inputs, named
  `{owner}/processes/{MD5 of the lower-cased input qualifiedNames}->{MD5 of the output's}` (upper-case hex), under its
  runnable (`task`): the connector writes one process per owner and output instead. Each is **taken over** (the
  ledger holds it for the connector from then on) and **retired** once the connector's own process of the same owner
  and output exists — its successor —: at once when the catalog holds the successor already, else when the next run
  of its code writes it;
- a `purview_custom_connector_generic_entity_with_columns` placeholder for every dataset the accelerator did not find
  in Purview, its qualifiedName lower-cased (`data_type`: the type the rule gave it): **retired** once no process
  uses it. A pending process that reads or writes one whose real dataset the catalog holds (the successor's dataset of
  the same qualifiedName in any case, or an entity of its `data_type` and qualifiedName) is **repointed** to it —
  inputs, outputs and the datasets its `columnMapping` names —, so the placeholder can go at once.

A process's output is compared with the successor's case-insensitively (the accelerator lower-cased its placeholders).
Several accelerator processes of one owner and output (one per input combination) all retire for the one successor.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

Key = tuple[str, str]  # (typeName, qualifiedName)

PROCESS_TYPE = "databricks_process"
PLACEHOLDER_TYPE = "purview_custom_connector_generic_entity_with_columns"
RUN_PREFIX = "accelerator:"  # the ledger runs that hold taken-over processes: accelerator:{sha256 of the process}
_HASHED = re.compile(r"^(?P<owner>.+)/processes/[0-9A-Fa-f]{32}->[0-9A-Fa-f]{32}$")


def hashed_owner(qualified_name: str) -> str | None:
    """The owner of an accelerator process, by its name (`{owner}/processes/{md5}->{md5}`), or None."""
    match = _HASHED.match(qualified_name)
    return match.group("owner") if match else None


def takeover_run_key(process: Key) -> str:
    """The ledger run that holds a taken-over process and its placeholders."""
    return RUN_PREFIX + hashlib.sha256(f"{process[0]}\n{process[1]}".encode()).hexdigest()[:40]


@dataclass(frozen=True)
class EstateProcess:
    """A process as the catalog holds it: its key, owner (the runnable it hangs under), datasets and column
    mapping text."""

    key: Key
    owner: Key | None
    inputs: tuple[Key, ...] = ()
    outputs: tuple[Key, ...] = ()

    @property
    def output(self) -> Key | None:
        return self.outputs[0] if self.outputs else None

    def datasets(self) -> tuple[Key, ...]:
        return (*self.inputs, *self.outputs)


@dataclass(frozen=True)
class Estate:
    """What the plan is made from. `accelerator`: the accelerator's processes (hash-named) still active;
    `successors`: the connector's own processes under their owners (the ledger says they are the connector's);
    `placeholders`: each placeholder those processes use, with its `data_type`; `existing`: entities of
    `(data_type, qualifiedName)` of placeholders the catalog holds; `owners`: the runnables, jobs and workspaces the
    accelerator's processes hang under (and theirs), as found; `registered`: processes already taken over."""

    accelerator: tuple[EstateProcess, ...] = ()
    successors: tuple[EstateProcess, ...] = ()
    placeholders: Mapping[Key, str] = field(default_factory=dict)
    existing: frozenset[Key] = frozenset()
    owners: tuple[Key, ...] = ()
    registered: frozenset[Key] = frozenset()


@dataclass(frozen=True)
class MigrationPlan:
    """What taking over the estate does. `retire`: accelerator process -> its successor (deleted now); `pending`:
    taken over, replaced by the next run of its code; `repoint`: placeholder -> the real dataset the pending processes
    use instead; `retire_placeholders`: no process will use them any more (deleted now); `kept_placeholders`: still used
    by a pending process, retired with the last of them; `owners`: written with from now on, unchanged now."""

    owners: tuple[Key, ...] = ()
    retire: tuple[tuple[Key, Key], ...] = ()
    pending: tuple[EstateProcess, ...] = ()
    repoint: tuple[tuple[Key, Key], ...] = ()
    retire_placeholders: tuple[Key, ...] = ()
    kept_placeholders: tuple[Key, ...] = ()
    taken_over: tuple[EstateProcess, ...] = ()  # every accelerator process: the ledger holds them from now on

    def is_empty(self) -> bool:
        return not (self.taken_over or self.retire_placeholders)

    def placeholders_of(self, process: EstateProcess) -> tuple[Key, ...]:
        """The placeholders a process uses that the ledger holds with it: those not repointed away."""
        repointed = dict(self.repoint)
        return tuple(sorted({k for k in process.datasets() if k[0] == PLACEHOLDER_TYPE and k not in repointed}))


def plan_migration(estate: Estate) -> MigrationPlan:
    """Pure: the plan for an estate (see the module docstring)."""
    by_owner: dict[Key | None, list[EstateProcess]] = {}
    for process in estate.successors:
        by_owner.setdefault(process.owner, []).append(process)
    retire: list[tuple[Key, Key]] = []
    pending: list[EstateProcess] = []
    for process in sorted(estate.accelerator, key=lambda p: p.key):
        successor = successor_of(process, by_owner.get(process.owner, ()))
        if successor is None:
            pending.append(process)
        else:
            retire.append((process.key, successor.key))
    real = _real_datasets(estate)
    used_by_pending = {k for p in pending for k in p.datasets() if k[0] == PLACEHOLDER_TYPE}
    repoint = tuple(sorted((k, real[k]) for k in used_by_pending if k in real))
    used = {k for p in estate.accelerator for k in p.datasets() if k[0] == PLACEHOLDER_TYPE}
    kept = sorted(used_by_pending - set(real))
    return MigrationPlan(
        owners=tuple(sorted(set(estate.owners))),
        retire=tuple(retire),
        pending=tuple(pending),
        repoint=repoint,
        retire_placeholders=tuple(sorted(used - set(kept))),
        kept_placeholders=tuple(kept),
        taken_over=tuple(sorted(estate.accelerator, key=lambda p: p.key)),
    )


def successor_of(process: EstateProcess, candidates: Iterable[EstateProcess]) -> EstateProcess | None:
    """The connector's process of the same owner whose output is the accelerator process's (in any case), the first
    by key when several statements write it."""
    output = process.output
    if output is None:
        return None
    wanted = output[1].lower()
    found = [c for c in candidates if c.owner == process.owner and c.output and c.output[1].lower() == wanted]
    return min(found, key=lambda c: c.key) if found else None


def _real_datasets(estate: Estate) -> dict[Key, Key]:
    """Placeholder -> the real dataset it stands for: a successor's dataset of its qualifiedName (in any case), else
    the entity of its `data_type` and qualifiedName the catalog holds."""
    seen: dict[str, Key] = {}
    for process in estate.successors:
        for key in process.datasets():
            if key[0] != PLACEHOLDER_TYPE:
                seen.setdefault(key[1].lower(), key)
    real: dict[Key, Key] = {}
    for key, data_type in sorted(estate.placeholders.items()):
        found = seen.get(key[1].lower())
        if found is None and (data_type, key[1]) in estate.existing:
            found = (data_type, key[1])
        if found is not None and found != key:
            real[key] = found
    return real


def render(plan: MigrationPlan, endpoint: str, *, applied: bool) -> list[str]:
    """What `ol2purview migrate accelerator` prints for a plan; the last line says whether it was carried out."""
    lines = [
        f"{endpoint}: the accelerator's estate: {len(plan.taken_over)} processes, "
        f"{len(plan.retire_placeholders) + len(plan.kept_placeholders)} placeholders, under {len(plan.owners)} "
        "workspaces, notebooks, jobs and tasks"
    ]
    sections: Sequence[tuple[str, list[str]]] = (
        ("Taken over: written by ol2purview from now on, unchanged", [f"  {t}  {q}" for t, q in plan.owners]),
        (
            "Retired: ol2purview's process of the same owner and output replaces it",
            [f"  {a[1]}\n    -> {s[1]}" for a, s in plan.retire],
        ),
        (
            "Taken over, replaced by the next run of its code",
            [f"  {p.key[1]}  (output {p.output[1] if p.output else '-'})" for p in plan.pending],
        ),
        (
            "Repointed to the real dataset (inputs, outputs, columnMapping), then retired",
            [f"  {p[1]}\n    -> {r[0]}  {r[1]}" for p, r in plan.repoint],
        ),
        ("Placeholders retired: no process uses them any more", [f"  {q}" for _, q in plan.retire_placeholders]),
        (
            "Placeholders kept until the processes that use them are replaced",
            [f"  {q}" for _, q in plan.kept_placeholders],
        ),
    )
    for title, items in sections:
        lines.append(f"{title} ({len(items)}):" if items else f"{title}: none")
        lines += items
    lines.append(
        "Carried out." if applied else "Nothing was changed: `ol2purview migrate accelerator --apply` carries it out."
    )
    return lines
