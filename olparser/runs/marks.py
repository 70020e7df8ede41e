"""What the run-state store remembers of a dataset key whose table may be dropped or renamed (a `LifecycleMark`):
plain data and its merge rule, shared by both stores; what the runner does with it is olparser/lineage/lifecycle.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from olparser.jsontypes import JSON

Key = tuple[str, str]
Order = tuple[float, str]  # a run's place: its event time, then its key (olparser.runs.rules.run_order)


@dataclass(frozen=True)
class LifecycleMark:
    """What the run-state store remembers of one dataset key: the newest change of its lifecycle (`change`, DROP or
    RENAME to `target`, made by the run at `changed_at`; `owned`: the key's type is the connector's) and the newest
    run that wrote it (`written_at`). Merging keeps the newer of each."""

    change: str | None = None
    changed_at: Order | None = None
    target: Key | None = None
    owned: bool = False
    written_at: Order | None = None

    def merged(self, other: "LifecycleMark") -> "LifecycleMark":
        """Both marks of the same key as one: the newer change, the newer write."""
        newer = other if _newer(other.changed_at, self.changed_at) else self
        written = other.written_at if _newer(other.written_at, self.written_at) else self.written_at
        return LifecycleMark(newer.change, newer.changed_at, newer.target, newer.owned, written)

    def to_json(self) -> JSON:
        return {
            "change": self.change,
            "changedAt": list(self.changed_at) if self.changed_at else None,
            "target": list(self.target) if self.target else None,
            "owned": self.owned,
            "writtenAt": list(self.written_at) if self.written_at else None,
        }

    @classmethod
    def from_json(cls, data: JSON) -> "LifecycleMark":
        def pair(value: Any, first: Callable[[Any], Any]) -> Any:
            return (first(value[0]), str(value[1])) if isinstance(value, list) and len(value) == 2 else None

        return cls(
            data.get("change"),
            pair(data.get("changedAt"), float),
            pair(data.get("target"), str),
            bool(data.get("owned")),
            pair(data.get("writtenAt"), float),
        )


def _newer(order: Order | None, than: Order | None) -> bool:
    return order is not None and (than is None or order > than)
