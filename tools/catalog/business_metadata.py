"""Business metadata (Purview's "managed attributes"): the rules of its typedefs and of the values entities carry, as
Apache Atlas keeps them (read in apache/atlas, release 2.4.0). Pure: plain JSON over a type registry.

An entity's business attributes are `{"<business metadata>": {"<attribute>": value}}`, kept with the entity's other
top-level fields (EntityRow.extra, key `businessAttributes`, absent when it has none). A write changes them as the
Data Map API's `businessAttributeUpdateBehavior` says: `ignore` (the default) leaves them as they are whatever the
payload holds; `replace` makes them exactly the payload's (none when it sends none); `merge` adds and updates the
attributes sent and keeps the others. In `replace` and `merge` a null value removes that attribute.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Mapping

from olparser.jsontypes import JSON

from . import errors

if TYPE_CHECKING:
    from .typeregistry import TypeRegistry

Values = dict[str, dict[str, Any]]

KEY = "businessAttributes"
BEHAVIOURS = ("ignore", "replace", "merge")
_ATTRIBUTE_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_ ]*$")  # AtlasAbstractDefStoreV2.NAME_REGEX
_STRUCTURED = ("ENTITY", "STRUCT", "CLASSIFICATION", "BUSINESS_METADATA")
# AtlasBuiltInTypes: the integral types' ranges (biginteger has none)
_INTEGRAL = {
    "byte": (-(2**7), 2**7 - 1),
    "short": (-(2**15), 2**15 - 1),
    "int": (-(2**31), 2**31 - 1),
    "long": (-(2**63), 2**63 - 1),
    "biginteger": None,
}
_DECIMAL = ("float", "double", "bigdecimal")


def applicable_types(attribute: JSON) -> list[str] | None:
    """The entity type names of a business attribute's `options.applicableEntityTypes` (a JSON list, as a string);
    None when it has none or the option is not such a list."""
    raw = (attribute.get("options") or {}).get("applicableEntityTypes")
    if not isinstance(raw, str):
        return None
    try:
        names = json.loads(raw)
    except json.JSONDecodeError:
        return None
    return names if isinstance(names, list) and all(isinstance(n, str) for n in names) else None


def _max_length(attribute: JSON) -> int | None:
    raw = (attribute.get("options") or {}).get("maxStrLength")
    try:
        return int(raw) if isinstance(raw, (str, int)) and not isinstance(raw, bool) else None
    except ValueError:
        return None


def _element(type_name: str) -> str:
    """The type an attribute's values are made of: X for array<X>, V for map<K,V> (AtlasBusinessMetadataType)."""
    type_name = type_name.strip()
    if type_name.startswith("array<") and type_name.endswith(">"):
        return type_name[len("array<") : -1].strip()
    if type_name.startswith("map<") and type_name.endswith(">"):
        return type_name[len("map<") : -1].split(",", 1)[-1].strip()
    return type_name


def check_definition(registry: "TypeRegistry", definition: JSON) -> None:
    """A business metadata typedef as Atlas checks it (AtlasBusinessMetadataType.resolveReferences, then
    AtlasBusinessMetadataDefStoreV2.validateType): values of primitive or enum types (or arrays or maps of them),
    applicable to existing entity types, strings bounded by `options.maxStrLength`; attribute names of letters,
    digits, '_' and spaces. An unknown applicable type is TYPE_NAME_NOT_FOUND, which the caller answers as Atlas does.
    `options.applicableEntityTypes` is required here: Atlas accepts an attribute without it, which then applies to no
    entity type at all."""
    name = definition["name"]
    for attribute in definition.get("attributeDefs") or ():
        element = _element(attribute.get("typeName", "string"))
        target = registry.get(element)
        if target is not None and target["category"] in _STRUCTURED:
            raise errors.business_metadata_attribute_type_invalid(name, attribute["name"])
        if "applicableEntityTypes" not in (attribute.get("options") or {}):
            raise errors.missing_mandatory_field(attribute["name"], "options.applicableEntityTypes")
        applicable = applicable_types(attribute)
        if applicable is None:
            raise errors.bad_request(
                f"{name}.{attribute['name']}: options.applicableEntityTypes must be a JSON list of entity type "
                "names, as a string"
            )
        for type_name in applicable:
            if not registry.is_entity_type(type_name):
                raise errors.type_name_not_found(type_name)
        if element == "string" and _max_length(attribute) is None:
            raise errors.missing_mandatory_field(attribute["name"], "options.maxStrLength")
    for attribute in definition.get("attributeDefs") or ():
        if not _ATTRIBUTE_NAME.match(attribute["name"]):
            raise errors.attribute_name_invalid_chars(attribute["name"])


# --- values ------------------------------------------------------------------------------------------------------
def update_behaviour(raw: str | None) -> str:
    """The `businessAttributeUpdateBehavior` query parameter (ignore when absent)."""
    if raw in (None, ""):
        return "ignore"
    if raw not in BEHAVIOURS:
        raise errors.invalid_parameters(f"businessAttributeUpdateBehavior must be one of {', '.join(BEHAVIOURS)}")
    return raw


def _attribute_defs(registry: "TypeRegistry", name: str) -> dict[str, JSON]:
    definition = registry.get(name)
    if definition is None or definition["category"] != "BUSINESS_METADATA":
        raise errors.unknown_business_metadata(name)
    return {a["name"]: a for a in definition.get("attributeDefs") or ()}


def _applies(registry: "TypeRegistry", attribute: JSON, type_name: str) -> bool:
    return any(registry.is_a(type_name, applicable) for applicable in applicable_types(attribute) or ())


def applicable_attributes(registry: "TypeRegistry", type_name: str) -> list[str]:
    """`{business metadata}.{attribute}` for every business attribute an entity of this type may carry."""
    return sorted(
        f"{d['name']}.{a['name']}"
        for d in registry.all()
        if d["category"] == "BUSINESS_METADATA"
        for a in d.get("attributeDefs") or ()
        if _applies(registry, a, type_name)
    )


def _number(value: object) -> float | int | None:
    """A JSON number (not a boolean), or None."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _integral(type_name: str, value: object) -> int:
    number = _number(value)
    if number is not None and float(number).is_integer():
        whole = int(number)
    elif isinstance(value, str):
        whole = int(value)
    else:
        raise ValueError
    bounds = _INTEGRAL[type_name]
    if bounds is not None and not bounds[0] <= whole <= bounds[1]:
        raise ValueError
    return whole


def _date(value: object) -> int:
    """Epoch milliseconds: a number, or a string of digits or an ISO 8601 time (UTC when it names no zone)."""
    number = _number(value)
    if number is not None:
        return int(number)
    if not isinstance(value, str):
        raise ValueError
    if value.lstrip("-").isdigit():
        return int(value)
    when = datetime.fromisoformat(value)
    return int((when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp() * 1000)


def _scalar(registry: "TypeRegistry", type_name: str, value: object) -> object:
    """`value` as a `type_name` value (normalized as Atlas's AtlasBuiltInTypes do), or ValueError."""
    if isinstance(value, (dict, list)):
        raise ValueError
    if type_name == "string":
        return str(value).lower() if isinstance(value, bool) else str(value)
    if type_name == "boolean":
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if isinstance(value, bool):
            return value
        raise ValueError
    if type_name in _INTEGRAL:
        return _integral(type_name, value)
    if type_name in _DECIMAL:
        number = _number(value)
        decimal = float(number) if number is not None else float(value) if isinstance(value, str) else math.nan
        if not math.isfinite(decimal):
            raise ValueError
        return decimal
    if type_name == "date":
        return _date(value)
    definition = registry.get(type_name)
    if definition is not None and definition["category"] == "ENUM":
        if isinstance(value, str) and value in [e.get("value") for e in definition.get("elementDefs") or ()]:
            return value
    raise ValueError


def _value(registry: "TypeRegistry", attribute: JSON, value: object, field: str) -> object:
    type_name = attribute.get("typeName", "string").strip()
    element = _element(type_name)
    try:
        if type_name.startswith("array<"):
            if not isinstance(value, list):
                raise ValueError
            items = [_scalar(registry, element, item) for item in value]
            normalized: object = items
        elif type_name.startswith("map<"):
            if not isinstance(value, dict):
                raise ValueError
            entries = {str(k): _scalar(registry, element, item) for k, item in value.items()}
            items, normalized = list(entries.values()), entries
        else:
            normalized = _scalar(registry, element, value)
            items = [normalized]
    except ValueError:
        raise errors.invalid_value(
            f"{field}={json.dumps(value)}: invalid value for type {attribute.get('typeName', 'string')}"
        ) from None
    limit = _max_length(attribute)
    longest = max((len(item) for item in items if isinstance(item, str)), default=0)
    if element == "string" and limit is not None and longest > limit:
        raise errors.invalid_value(
            f"{field}: Business attribute-value exceeds maximum length limit ({longest} characters, at most {limit})"
        )
    return normalized


def attribute_value(registry: "TypeRegistry", attribute: JSON, value: object, field: str) -> object:
    """`value` for an attributeDef of a primitive or enum type (or an array or map of them), normalized as Atlas's
    types do; INVALID_VALUE otherwise. Classification attributes are checked with it too."""
    return _value(registry, attribute, value, field)


def checked(registry: "TypeRegistry", type_name: str, sent: object, with_values: bool = True) -> Values:
    """The business attributes an entity of `type_name` is sent, validated and normalized (nulls kept: they remove).
    Without values (a removal): only the names are checked."""
    if not isinstance(sent, dict) or not all(isinstance(v, dict) for v in sent.values()):
        raise errors.invalid_parameters(
            'businessAttributes must be an object of business metadata: {"<name>": {"<attribute>": value}}'
        )
    out: Values = {}
    for name, values in sent.items():
        defined = _attribute_defs(registry, name)
        group: dict[str, Any] = {}
        for attribute, value in values.items():
            definition = defined.get(attribute)
            if definition is None:
                raise errors.unknown_attribute(attribute, name)
            if not with_values:
                group[attribute] = None
                continue
            if not _applies(registry, definition, type_name):
                raise errors.business_metadata_not_applicable(
                    f"{name}.{attribute}", applicable_attributes(registry, type_name)
                )
            field = f"{type_name}.{name}.{attribute}"
            group[attribute] = None if value is None else _value(registry, definition, value, field)
        out[name] = group
    return out


def applied(current: Mapping[str, Mapping[str, Any]], sent: Values, replace: bool) -> Values:
    """An entity's business attributes after `sent` (checked): exactly `sent` when replacing, else merged; a null
    value removes its attribute, a group left empty goes."""
    result: Values = {} if replace else {name: dict(values) for name, values in current.items()}
    for name, values in sent.items():
        group = result.setdefault(name, {})
        for attribute, value in values.items():
            if value is None:
                group.pop(attribute, None)
            else:
                group[attribute] = value
        if not group:
            del result[name]
    return result


def removed(current: Mapping[str, Mapping[str, Any]], sent: Values) -> Values:
    """DELETE .../businessmetadata (EntityGraphMapper.removeBusinessAttributes): each group sent loses the attributes
    named, or all of them when none is named."""
    result: Values = {name: dict(values) for name, values in current.items()}
    for name, values in sent.items():
        group = result.get(name, {})
        for attribute in list(group) if not values else values:
            group.pop(attribute, None)
        if not group:
            result.pop(name, None)
    return result


def with_values(extra: JSON, values: Values) -> JSON:
    """An entity's kept top-level fields with these business attributes (the key absent when there are none)."""
    out = {k: v for k, v in extra.items() if k != KEY}
    if values:
        out[KEY] = values
    return out


def of(extra: Mapping[str, Any]) -> Values:
    return {name: dict(values) for name, values in (extra.get(KEY) or {}).items()}


def written(registry: "TypeRegistry", type_name: str, extra: JSON, sent: object, behaviour: str) -> JSON:
    """An entity's kept fields after an entity write (POST /entity, /entity/bulk) whose payload carries `sent` (None:
    no businessAttributes), under `businessAttributeUpdateBehavior`."""
    if behaviour == "ignore" or (sent is None and behaviour == "merge"):
        return extra
    values = checked(registry, type_name, {} if sent is None else sent)
    return with_values(extra, applied(of(extra), values, replace=behaviour == "replace"))
