"""Writes olparser/contract/lean_checks.py: each definition of the event contract as a plain Python function that
only answers "valid?", the fast path of intake validation (schema.CompiledDef).

Run `make contract-checks` after editing olparser/contract/event-contract.schema.json;
tests/unit/contract/test_lean_checks.py fails while the written file differs from what this produces, and checks the
functions against the detailed validators on generated instances.

The contract uses a small part of JSON Schema (type, enum, required, properties, additionalProperties, items,
maxItems, maxLength, pattern, format, $ref); anything else stops the generator. References are written inline, except
a definition that contains itself (nested schema fields), which becomes a function of its own. The settings that
bound the contract (IntakeLimits: name length, array sizes) are parameters of the factory the module exposes, so
the code is generated once and never at run time.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from typing import Any

from olparser.contract.schema import (
    ARRAY_BOUNDS,
    EVENT_KINDS,
    FACET_GROUPS,
    SCHEMA_PATH,
    contract,
    no_control_characters,
)

OUTPUT = SCHEMA_PATH.with_name("lean_checks.py")
SUPPORTED = frozenset(
    {
        "$ref",
        "type",
        "enum",
        "required",
        "properties",
        "additionalProperties",
        "items",
        "maxItems",
        "maxLength",
        "pattern",
        "format",
    }
)
ANNOTATIONS = frozenset({"description", "$comment", "title"})
FORMATS = {"uuid": "is_uuid", "date-time": "is_date_time"}  # format -> the factory's parameter that tests it
NAME_LENGTH = (("Name", "maxLength"), "max_string_chars")
# JSON type -> the test that a value `{}` has it (JSON parsers give exact Python types; bool is not a number).
TYPE_TESTS = {
    "string": "type({}) is str",
    "object": "type({}) is dict",
    "array": "type({}) is list",
    "boolean": "type({}) is bool",
    "null": "{} is None",
    "number": "(type({0}) is int or type({0}) is float)",
    "integer": "(type({0}) is int or type({0}) is float and {0}.is_integer())",
}


NOT_TYPE_TESTS = {
    "string": "type({}) is not str",
    "object": "type({}) is not dict",
    "array": "type({}) is not list",
    "boolean": "type({}) is not bool",
    "null": "{} is not None",
}


def roots() -> list[str]:
    """The definitions validated on their own: each event kind and each facet the connector reads."""
    defs = contract()["$defs"]
    names = list(EVENT_KINDS)
    for group in FACET_GROUPS.values():
        for ref in defs[group]["properties"].values():
            name = ref["$ref"].rsplit("/", 1)[1]
            if name not in names:
                names.append(name)
    return names


@dataclass
class _Writer:
    defs: dict[str, Any]
    parameters: dict[tuple[str, ...], str]
    lines: list[str] = field(default_factory=list)
    constants: dict[str, str] = field(default_factory=dict)  # Python expression -> its constant's name
    recursive: list[str] = field(default_factory=list)
    variables: int = 0

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def variable(self) -> str:
        self.variables += 1
        return f"v{self.variables}"

    def constant(self, expression: str) -> str:
        if expression not in self.constants:
            self.constants[expression] = f"_C{len(self.constants)}"
        return self.constants[expression]

    def bound(self, path: tuple[str, ...], literal: Any) -> str:
        return self.parameters.get(path) or repr(int(literal))

    def node(
        self, schema: dict[str, Any], var: str, indent: int, path: tuple[str, ...], open_defs: tuple[str, ...]
    ) -> None:
        """Lines that `return False` when the value in `var` breaks `schema` (at `path` in $defs)."""
        unknown = set(schema) - SUPPORTED - ANNOTATIONS
        if unknown:
            raise ValueError(f"{'/'.join(path)}: the generator does not know {sorted(unknown)}")
        ref = schema.get("$ref")
        if ref is not None:
            if not ref.startswith("#/$defs/") or len(set(schema) - ANNOTATIONS) > 1:
                raise ValueError(f"{'/'.join(path)}: unsupported reference {ref!r}")
            target = ref.rsplit("/", 1)[1]
            if target in open_defs:
                if target not in self.recursive:
                    self.recursive.append(target)
                self.emit(indent, f"if not {function_name(target)}({var}):")
                self.emit(indent + 1, "return False")
                return
            self.node(self.defs[target], var, indent, (target,), (*open_defs, target))
            return
        types = _type_names(schema.get("type"), path)
        if len(types) == 1 and types[0] in NOT_TYPE_TESTS:
            self.emit(indent, f"if {NOT_TYPE_TESTS[types[0]].format(var)}:")
            self.emit(indent + 1, "return False")
        elif types:
            test = " or ".join(TYPE_TESTS[name].format(var) for name in types)
            self.emit(indent, f"if not ({test}):")
            self.emit(indent + 1, "return False")
        if "enum" in schema:
            members = schema["enum"]
            if not all(type(member) is str for member in members):
                raise ValueError(f"{'/'.join(path)}: only string enums are supported")
            allowed = self.constant(f"frozenset({sorted(members)!r})")
            self.emit(indent, f"if type({var}) is not str or {var} not in {allowed}:")
            self.emit(indent + 1, "return False")
        self.typed(schema, var, indent, path, open_defs, "string", self.string)
        self.typed(schema, var, indent, path, open_defs, "object", self.object)
        self.typed(schema, var, indent, path, open_defs, "array", self.array)

    def typed(
        self,
        schema: dict[str, Any],
        var: str,
        indent: int,
        path: tuple[str, ...],
        open_defs: tuple[str, ...],
        json_type: str,
        write: Any,
    ) -> None:
        """The keywords of one JSON type, under a test of that type unless the schema allows no other."""
        types = _type_names(schema.get("type"), path)
        if types and json_type not in types:
            return
        mark = len(self.lines)
        inner = indent if types == [json_type] else indent + 1
        write(schema, var, inner, path, open_defs)
        if inner != indent and len(self.lines) > mark:
            self.lines.insert(mark, "    " * indent + f"if {TYPE_TESTS[json_type].format(var)}:")

    def string(self, schema: dict[str, Any], var: str, indent: int, path: tuple[str, ...], _: tuple[str, ...]) -> None:
        if "maxLength" in schema:
            self.emit(indent, f"if len({var}) > {self.bound((*path, 'maxLength'), schema['maxLength'])}:")
            self.emit(indent + 1, "return False")
        if "pattern" in schema:
            pattern = self.constant(f"re.compile({schema['pattern']!r}).search")
            guard = "refuse_control and " if schema["pattern"] == no_control_characters() else ""
            self.emit(indent, f"if {guard}{pattern}({var}) is None:")
            self.emit(indent + 1, "return False")
        if "format" in schema:
            if schema["format"] not in FORMATS:
                raise ValueError(f"{'/'.join(path)}: unknown format {schema['format']!r}")
            self.emit(indent, f"if not {FORMATS[schema['format']]}({var}):")
            self.emit(indent + 1, "return False")

    def object(
        self, schema: dict[str, Any], var: str, indent: int, path: tuple[str, ...], open_defs: tuple[str, ...]
    ) -> None:
        required = schema.get("required", [])
        if required:
            missing = " or ".join(f"{json.dumps(key)} not in {var}" for key in required)
            self.emit(indent, f"if {missing}:")
            self.emit(indent + 1, "return False")
        properties = schema.get("properties", {})
        for key, sub in properties.items():
            member = self.variable()
            mark = len(self.lines)
            present = key in required  # a required member is known to be there: read it directly
            self.node(sub, member, indent if present else indent + 1, (*path, "properties", key), open_defs)
            if len(self.lines) == mark:
                continue
            if present:
                self.lines.insert(mark, "    " * indent + f"{member} = {var}[{json.dumps(key)}]")
            else:
                self.lines[mark:mark] = [
                    "    " * indent + f"{member} = {var}.get({json.dumps(key)}, _MISSING)",
                    "    " * indent + f"if {member} is not _MISSING:",
                ]
        extra = schema.get("additionalProperties", True)
        if extra is True:
            return
        if not isinstance(extra, dict):
            raise ValueError(f"{'/'.join(path)}: additionalProperties must be a schema or true")
        key, member = self.variable(), self.variable()
        mark = len(self.lines)
        body = indent + 2 if properties else indent + 1
        self.node(extra, member, body, (*path, "additionalProperties"), open_defs)
        if len(self.lines) > mark:
            head = ["    " * indent + f"for {key}, {member} in {var}.items():"]
            if properties:
                named = self.constant(f"frozenset({sorted(properties)!r})")
                head.append("    " * (indent + 1) + f"if {key} not in {named}:")
            self.lines[mark:mark] = head

    def array(
        self, schema: dict[str, Any], var: str, indent: int, path: tuple[str, ...], open_defs: tuple[str, ...]
    ) -> None:
        if "maxItems" in schema:
            self.emit(indent, f"if len({var}) > {self.bound((*path, 'maxItems'), schema['maxItems'])}:")
            self.emit(indent + 1, "return False")
        items = schema.get("items")
        if isinstance(items, dict):
            member = self.variable()
            mark = len(self.lines)
            self.node(items, member, indent + 1, (*path, "items"), open_defs)
            if len(self.lines) > mark:
                self.lines.insert(mark, "    " * indent + f"for {member} in {var}:")


def _type_names(keyword: Any, path: tuple[str, ...]) -> list[str]:
    names = [] if keyword is None else [keyword] if isinstance(keyword, str) else list(keyword)
    for name in names:
        if name not in TYPE_TESTS:
            raise ValueError(f"{'/'.join(path)}: unknown type {name!r}")
    if "integer" in names and "number" in names:
        names.remove("integer")
    return names


def function_name(definition: str) -> str:
    return f"check_{definition}"


def parameters() -> dict[tuple[str, ...], str]:
    """Where a setting bounds the contract: path in $defs -> parameter of the factory."""
    bounds = {path: limit for path, limit in ARRAY_BOUNDS}
    return {NAME_LENGTH[0]: NAME_LENGTH[1], **{(*path, "maxItems"): limit for path, limit in bounds.items()}}


def generate() -> str:
    defs = contract()["$defs"]
    writer = _Writer(defs, parameters())
    functions: list[list[str]] = []
    done: list[str] = []
    pending = roots()
    while pending:
        name = pending.pop(0)
        if name in done:
            continue
        writer.lines, writer.variables = [], 0
        writer.emit(1, f"def {function_name(name)}(v0: Any) -> bool:")
        writer.node(defs[name], "v0", 2, (name,), (name,))
        writer.emit(2, "return True")
        functions.append(writer.lines)
        done.append(name)
        pending += [target for target in writer.recursive if target not in done and target not in pending]
    defaults = _defaults(defs)
    bounds = [f"    {name}: int = {value}," for name, value in defaults.items()]
    table = [f"        {json.dumps(name)}: {function_name(name)}," for name in done]
    out = [
        f"# Generated by tools/generate_contract_checks.py from {SCHEMA_PATH.name}: do not edit (make contract-checks).",
        '"""The event contract\'s definitions as plain functions that answer "valid?" (see schema.CompiledDef)."""',
        "from __future__ import annotations",
        "",
        "import re",
        "from typing import Any, Callable",
        "",
        "_MISSING = object()",
        *(f"{name} = {expression}" for expression, name in writer.constants.items()),
        "",
        "",
        "def checks(",
        "    *,",
        *bounds,
        "    is_uuid: Callable[[str], bool], is_date_time: Callable[[str], bool], refuse_control: bool = True,",
        ") -> dict[str, Callable[[Any], bool]]:",
        '    """One function per definition, for these bounds (IntakeLimits). `is_uuid`, `is_date_time`: the tests of',
        "    the contract's formats. `refuse_control`: False leaves out the patterns that refuse control characters (for",
        '    events known to hold none)."""',
    ]
    for lines in functions:
        out += ["", *lines]
    out += ["", "    return {", *table, "    }", ""]
    return "\n".join(out)


def _defaults(defs: dict[str, Any]) -> dict[str, int]:
    values: dict[str, int] = {}
    for path, name in parameters().items():
        node: Any = defs
        for key in path:
            node = node[key]
        if values.setdefault(name, node) != node:
            raise ValueError(f"the contract bounds {name} with two values")
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the written file is out of date")
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT} is out of date: run make contract-checks", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
