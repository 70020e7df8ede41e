"""Messages that no retry can fix go to the poison queue at once, instead of after `maxDequeueCount` attempts.

Today that is one case: the catalog refuses the run because it does not know an entity type (Atlas `ATLAS-400-00-014`,
"Type ENTITY with name X does not exist"), which usually means a mapping rule names a `purviewDataType` the target
has no type for. Retrying five times 30 s apart only delays the poison message; instead the message is written,
unchanged, to `<queue>-poison` and the trigger returns normally (an Azure Python function cannot move its message
itself), with one log line naming the type and the rules of the config that produce it. Once the rule or the
catalog is fixed, `ol2purview requeue` brings the message back.

Other rejections keep the queue's retries: a 404 for a reference can be another instance's write in progress.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from typing import Any, Iterable, Protocol

from olparser.adapters.delivery.queues import QueueService, poison_queue_name

log = logging.getLogger(__name__)
_moved = {"count": 0}  # messages this process moved at once (the local host's status adds them to its own moves)
_moved_lock = threading.Lock()
UNKNOWN_TYPE_CODES = frozenset({"ATLAS-400-00-014"})
_TYPE_NAME = re.compile(r"(?:type \w+ with name|typename|unknown type)\s+'?([A-Za-z0-9_.\-]+)'?", re.IGNORECASE)


class PoisonRuntime(Protocol):
    """What `poison_at_once` needs from `olparser.adapters.runtime.Runtime`."""

    def engine(self) -> Any: ...
    def queue_service(self) -> QueueService: ...


@dataclass(frozen=True)
class UnknownType:
    """A rejection because the catalog has no such entity type; `rules` are the config's rules that produce it."""

    type_name: str
    rules: tuple[str, ...]

    def describe(self) -> str:
        if self.rules:
            origin = f"produced by mapping rule(s) {', '.join(repr(r) for r in self.rules)}"
        else:
            origin = "no mapping rule produces it (one of the connector's own types from olparser/lineage/typedefs?)"
        return f"the catalog has no entity type {self.type_name!r} ({origin})"


def unknown_type_name(exc: BaseException) -> str | None:
    """The type name when `exc` is the catalog's unknown-type rejection (`?` if the message does not name it)."""
    code = getattr(exc, "error_code", None)
    if code not in UNKNOWN_TYPE_CODES:
        return None
    match = _TYPE_NAME.search(str(getattr(exc, "message", "") or exc))
    return match.group(1) if match else "?"


def rules_producing(rules: Iterable[Any], type_name: str) -> tuple[str, ...]:
    """Names of the rules whose `purviewDataType` is `type_name`, in config order."""
    return tuple(rule.name for rule in rules if getattr(rule, "purview_type", None) == type_name)


def classify(exc: BaseException, rules: Iterable[Any]) -> UnknownType | None:
    """An `UnknownType` when no retry can fix `exc`, else None (the queue retries as usual)."""
    type_name = unknown_type_name(exc)
    if type_name is None:
        return None
    return UnknownType(type_name, rules_producing(rules, type_name))


def poison_at_once(
    runtime: PoisonRuntime,
    queue_name: str,
    text: str,
    exc: BaseException,
    run_id: str | None = None,
    mapped_with: Any = None,
) -> bool:
    """Write `text` to `<queue_name>-poison` when `exc` cannot be fixed by retrying; True when it was written (the
    trigger then returns normally, so the host deletes the original message).

    `mapped_with`: the rules (a MappingEngine) in force when the event was mapped, named in the log line. When the
    rule file has changed since (a user fixed the rule and ran `requeue` at once, before the change was picked up),
    the event is left to the queue's retry, which maps it with the new rules, instead of being poisoned again."""
    engine = runtime.engine()
    mapped = mapped_with if mapped_with is not None else getattr(engine, "current", engine)
    hopeless = classify(exc, mapped.rules)
    if hopeless is None:
        return False
    refresh = getattr(engine, "refresh", None)
    if refresh is not None:
        refresh()  # look at the rule file now, not at its next check
    if getattr(engine, "current", engine) is not mapped:
        log.warning(
            "runId=%s: %s, but the mapping rules have changed since it was mapped: retried with the new "
            "rules instead of moved to the poison queue",
            run_id or "-",
            hopeless.describe(),
        )
        return False
    poison = poison_queue_name(queue_name)
    runtime.queue_service().queue(poison).send(text)
    with _moved_lock:
        _moved["count"] += 1
    log.error(
        "runId=%s moved to %s at once, as no retry can fix it: %s. Add the type to the catalog or change the "
        "rule (check with `qn-tester lint --catalog`), then `ol2purview requeue`",
        run_id or "-",
        poison,
        hopeless.describe(),
    )
    return True


def moved_at_once() -> int:
    """How many messages this process has moved to a poison queue at once (its trigger then returned normally)."""
    with _moved_lock:
        return _moved["count"]
