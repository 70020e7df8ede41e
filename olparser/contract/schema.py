"""The project's own event contract (event-contract.schema.json): compiled validators and readable error messages.

Each definition is checked in up to three ways from the same file. A lean check, plain Python generated from the
contract (lean_checks.py, written by tools/generate_contract_checks.py; a second set without the patterns that refuse
control characters, for bodies that hold none), answers "valid?" for every event and facet; only when it says no,
fastjsonschema with details runs and stops at the first error, which is what the message describes (its path resolved against the
instance); jsonschema, the reference implementation, is asked (for its first error only) just when that path cannot
be resolved. So a malformed part costs one fast pass that stops where it breaks, never a collection of every error.
Both use the same format functions (is_uuid, is_date_time). Array bounds (`maxItems`) that have a setting are set
from IntakeLimits when the contract is compiled, like Name.maxLength.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from datetime import datetime
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, Callable

import fastjsonschema
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from olparser.contract import lean_checks
from olparser.contract.errors import json_path, preview
from olparser.contract.times import is_spark_form

SCHEMA_PATH = Path(__file__).with_name("event-contract.schema.json")
EVENT_KINDS = ("RunEvent", "DatasetEvent", "JobEvent")

# Which $defs list the facets read at each kind of facet map (see strip.facet_maps for the places).
FACET_GROUPS = {
    "run": "ReadRunFacets",
    "job": "ReadJobFacets",
    "dataset": "ReadDatasetFacets",
    "inputFacets": "ReadInputDatasetFacets",
    "outputFacets": "ReadOutputDatasetFacets",
}

_DATE_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):?(\d{2}))?\Z", re.ASCII
)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z", re.ASCII)
NAME_SETTING = "setting MAX_NAME_CHARS"  # Name.maxLength is the only maxLength of the contract
_CONTROL_CHAR = re.compile(r"[\x00-\x1f\x7f]")
_JSON_TYPE_NAMES = {
    "string": "a string",
    "array": "an array",
    "object": "an object",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


@cache
def contract() -> dict[str, Any]:
    """The contract (event-contract.schema.json), read when first asked for and then kept; not to be changed (the
    validators compile a copy)."""
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


def no_control_characters() -> str:
    """The contract's pattern that refuses control characters (Name.pattern)."""
    pattern: str = contract()["$defs"]["Name"]["pattern"]
    return pattern


def is_date_time(value: object) -> bool:
    """RFC 3339 date-time (T or space separator, up to 9 fraction digits); the UTC offset may be omitted."""
    if not isinstance(value, str):
        return True  # formats apply to strings only; the type keyword catches the rest
    if is_spark_form(value):
        try:
            datetime.fromisoformat(value)
            return True
        except ValueError:
            pass  # read below (a leap second is accepted there)
    return date_time_by_pattern(value)


def date_time_by_pattern(value: str) -> bool:
    """`is_date_time` read with the contract's pattern, whatever the form."""
    match = _DATE_TIME.match(value)
    if match is None:
        return False
    year, month, day, hour, minute, second, off_h, off_m = match.groups()
    try:
        datetime(int(year), int(month), int(day), int(hour), int(minute), min(int(second), 59))
    except ValueError:
        return False
    return off_h is None or (int(off_h) <= 23 and int(off_m) <= 59)


def is_uuid(value: object) -> bool:
    """8-4-4-4-12 hexadecimal digits (any version, either case); no braces, no urn: prefix."""
    return not isinstance(value, str) or _UUID.match(value) is not None


FORMATS: dict[str, Callable[[object], bool]] = {"uuid": is_uuid, "date-time": is_date_time}


def _format_checker() -> FormatChecker:
    checker = FormatChecker(formats=())
    for name, check in FORMATS.items():
        checker.checks(name)(check)
    return checker


FORMAT_CHECKER = _format_checker()


@dataclass(frozen=True)
class CompiledDef:
    """One definition of the contract, compiled for speed (fast) and for explanations (full)."""

    name: str
    fast: Callable[[Any], Any]
    full: Draft202012Validator
    lean: Callable[[Any], bool] | None = None  # "valid?" only: the generated function (lean_checks.py)
    lean_plain: Callable[[Any], bool] | None = None  # `lean` without the control-character patterns

    def problem(
        self, instance: Any, root: tuple[str | int, ...] = (), prefix: str = "$", control_free: bool = False
    ) -> tuple[str, str] | None:
        """(message, JSON path) of the most relevant violation, or None when `instance` is valid.

        `root` is where `instance` sits in the event and `prefix` the path of the event itself ("$" or "$[3]").
        `control_free`: no string of the event holds a control character (the body had none to decode), so the
        patterns that refuse them cannot fail and are not run.
        """
        lean = self.lean_plain if control_free else self.lean
        if lean is not None and lean(instance):
            return None
        try:
            self.fast(instance)
            return None
        except fastjsonschema.JsonSchemaValueException as exc:
            parts = locate(instance, exc.name or "", exc.value)
            if parts is not None and exc.rule is not None:
                return message_for(exc.rule, exc.rule_definition, exc.value, (*root, *parts), prefix)
        except fastjsonschema.JsonSchemaException:
            pass
        error = next(iter(self.full.iter_errors(instance)), None)  # the first error only, never all of them
        return None if error is None else describe(error, root, prefix)


_LOCATE_STEPS = 10_000


def locate(instance: Any, name: str, value: Any) -> tuple[str | int, ...] | None:
    """The path inside `instance` of fastjsonschema's error location `name` (`data.fields[0].name`), or None.

    The name joins keys with `.` and indexes with `[i]` without quoting, so keys that contain `.` or `[` (column
    names, Spark property names) are matched against the keys actually present; among readings of the name, the one
    that lands on the failing `value` wins. Bounded: at most _LOCATE_STEPS nodes are visited.
    """
    if not name.startswith("data"):
        return None
    target, end = name[4:], len(name) - 4
    stack: list[tuple[Any, int, tuple[str | int, ...]]] = [(instance, 0, ())]
    steps = 0
    while stack and steps < _LOCATE_STEPS:
        steps += 1
        node, pos, path = stack.pop()
        if pos == end:
            if node is value or (type(node) is type(value) and node == value):
                return path
            continue
        if type(node) is list and target.startswith("[", pos):
            close = target.find("]", pos)
            digits = target[pos + 1 : close] if close > 0 else ""
            if digits.isdigit() and int(digits) < len(node):
                stack.append((node[int(digits)], close + 1, (*path, int(digits))))
        elif type(node) is dict and target.startswith(".", pos):
            start = pos + 1
            for key in node:
                if type(key) is str and target.startswith(key, start):
                    after = start + len(key)
                    if after == end or target[after] in ".[":
                        stack.append((node[key], after, (*path, key)))
    return None


@dataclass(frozen=True)
class ContractValidators:
    """Compiled definitions: one per event kind, and one per facet read, grouped by the kind of facet map."""

    events: dict[str, CompiledDef]
    facets: dict[str, dict[str, CompiledDef]]


# Where the contract's arrays take their `maxItems` from a limit (see IntakeLimits): (path in $defs, limit name).
ARRAY_BOUNDS = (
    (("RunEvent", "properties", "inputs"), "datasets"),
    (("RunEvent", "properties", "outputs"), "datasets"),
    (("JobEvent", "properties", "inputs"), "datasets"),
    (("JobEvent", "properties", "outputs"), "datasets"),
    (("SchemaDatasetFacet", "properties", "fields"), "columns"),
    (("SchemaField", "properties", "fields"), "columns"),
    (("EnvironmentPropertiesRunFacet", "properties", "environment-properties", "properties", "mountPoints"), "mounts"),
    (
        ("ColumnLineageDatasetFacet", "properties", "fields", "additionalProperties", "properties", "inputFields"),
        "input_fields",
    ),
    (("ColumnLineageDatasetFacet", "properties", "dataset"), "input_fields"),
)


def _bounded_array(schema: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    node = schema["$defs"]
    for key in path:
        node = node[key]
    found: dict[str, Any] = node
    return found


def contract_validators(
    max_string_chars: int | None = None,
    *,
    datasets: int | None = None,
    columns: int | None = None,
    mounts: int | None = None,
    input_fields: int | None = None,
) -> ContractValidators:
    """The contract compiled once per set of limits (name length and array bounds are its only run-time parameters;
    a limit left as None keeps the file's value)."""
    if max_string_chars is None:
        max_string_chars = int(contract()["$defs"]["Name"]["maxLength"])
    return _compiled(max_string_chars, datasets, columns, mounts, input_fields)


@lru_cache(maxsize=8)
def _compiled(
    max_string_chars: int, datasets: int | None, columns: int | None, mounts: int | None, input_fields: int | None
) -> ContractValidators:
    schema = copy.deepcopy(contract())
    contract_id: str = schema["$id"]
    schema["$defs"]["Name"]["maxLength"] = max_string_chars
    bounds = {"datasets": datasets, "columns": columns, "mounts": mounts, "input_fields": input_fields}
    for path, limit in ARRAY_BOUNDS:
        if bounds[limit] is not None:
            _bounded_array(schema, path)["maxItems"] = bounds[limit]
    registry = Registry().with_resource(contract_id, Resource.from_contents(schema, default_specification=DRAFT202012))
    given = {
        "max_string_chars": max_string_chars,
        **{limit: value for limit, value in bounds.items() if value is not None},
    }
    lean, lean_plain = (
        lean_checks.checks(**given, is_uuid=is_uuid, is_date_time=is_date_time, refuse_control=refuse)
        for refuse in (True, False)
    )

    def compile_def(name: str) -> CompiledDef:
        fast = fastjsonschema.compile(
            {"$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}, formats=FORMATS, use_default=False
        )
        full = Draft202012Validator(
            {"$ref": f"{contract_id}#/$defs/{name}"}, registry=registry, format_checker=FORMAT_CHECKER
        )
        # a definition the generated checks lack yet (the contract edited, `make contract-checks` not yet run, which
        # imports this module) is checked by the fast validator alone; tests/unit/contract keeps the file current
        return CompiledDef(name, fast, full, lean.get(name), lean_plain.get(name))

    facets = {}
    for group, def_name in FACET_GROUPS.items():
        read = schema["$defs"][def_name]["properties"]
        facets[group] = {facet: compile_def(ref["$ref"].rsplit("/", 1)[1]) for facet, ref in read.items()}
    return ContractValidators(events={kind: compile_def(kind) for kind in EVENT_KINDS}, facets=facets)


def describe(error: ValidationError, root: tuple[str | int, ...], prefix: str) -> tuple[str, str]:
    """The message for a jsonschema error (the fallback when fastjsonschema's location cannot be resolved)."""
    return message_for(
        str(error.validator), error.validator_value, error.instance, (*root, *error.absolute_path), prefix
    )


def message_for(keyword: str, expected: Any, value: Any, parts: tuple[Any, ...], prefix: str) -> tuple[str, str]:
    """A short message that names the field and the problem, without echoing large values: (message, JSON path)."""
    if keyword == "required" and isinstance(value, dict) and expected:
        missing = next((name for name in expected if name not in value), expected[0])
        path = json_path((*parts, missing), prefix)
        return f"{path} is required but missing", path
    path = json_path(parts, prefix)
    if keyword == "type":
        types = [expected] if isinstance(expected, str) else list(expected or ())
        wanted = " or ".join(_JSON_TYPE_NAMES.get(t, t) for t in types)
        return f"{path} must be {wanted}, got {_json_type_of(value)}", path
    if keyword == "enum":
        allowed = ", ".join(str(v) for v in expected)
        return f"{path} must be one of {allowed}; got {preview(value)}", path
    if keyword == "format" and expected == "uuid":
        return f"{path} must be a UUID; got {preview(value)}", path
    if keyword == "format" and expected == "date-time":
        return f"{path} must be an ISO 8601 date-time such as 2024-05-01T12:00:00.000Z; got {preview(value)}", path
    if keyword == "maxLength" and isinstance(value, str):
        return f"{path} is {len(value)} characters long, more than the limit of {expected} ({NAME_SETTING})", path
    if keyword == "maxItems" and isinstance(value, list):
        return f"{path} has {len(value):,} items, more than the limit of {expected:,}", path
    if keyword == "pattern" and value == "":
        return f"{path} must not be empty", path
    if keyword == "pattern" and isinstance(value, str) and (control := _CONTROL_CHAR.search(value)):
        return f"{path} contains control character U+{ord(control.group()):04X} at index {control.start()}", path
    return f"{path} breaks the contract's {keyword!r} rule", path  # never echo the value


def _json_type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    names: dict[type[Any], str] = {str: "a string", dict: "an object", list: "an array"}
    return names.get(type(value), "null")
