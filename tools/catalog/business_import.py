"""Business metadata by file (the Data Map's /entity/businessmetadata/import and its template), as Atlas's
AtlasEntityStoreV2.bulkCreateOrUpdateBusinessAttributes reads it: a CSV whose first line is the template's header,
then one line per value: entity type, the entity's unique attribute value, `{business metadata}.{attribute}`, the
value (`|` between the values of an array attribute), and optionally the unique attribute's name (qualifiedName).
Each entity's values are merged into what it carries; a line that cannot be applied is reported, not fatal."""

from __future__ import annotations

import csv
import email.parser
import email.policy
import io
from typing import Any

from olparser.jsontypes import JSON

from . import errors
from .classifications import Writer
from .mutations import write_business_attributes
from .store import Session
from .typeregistry import TypeRegistry

TEMPLATE = (
    "EntityType,EntityUniqueAttributeValue,BusinessAttributeName,BusinessAttributeValue,"
    "EntityUniqueAttributeName[optional]"
)


def uploaded_file(content_type: str, body: bytes) -> tuple[str, bytes]:
    """(file name, content) of the `file` part of a multipart/form-data body."""
    if not content_type.lower().startswith("multipart/form-data"):
        raise errors.invalid_parameters("send the file as multipart/form-data, in a part named 'file'")
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body
    )
    for part in message.iter_parts() if message.is_multipart() else ():
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            return str(part.get_filename() or ""), payload if isinstance(payload, bytes) else b""
    raise errors.invalid_parameters("the form has no part named 'file'")


def _java_map(value: object) -> str:
    """A value as Java's toString writes it (maps `{a={b=c}}`, lists `[x, y]`, booleans `true`), which is how Atlas
    names what it imported."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_java_map(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_java_map(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def import_file(w: Writer, name: str, content: bytes) -> JSON:
    """BulkImportResult: one success per entity (its guid, the business attributes it now carries), one failure
    per line that could not be applied, or per entity whose values could not be written (why: a value its
    attribute's type refuses, an entity in a collection the writer may not write)."""
    session, registry = w.session, w.registry
    if not name.lower().endswith(".csv"):
        raise errors.AtlasError(
            400, "ATLAS-400-00-09C", f"The provided file type: {name} is not supported. Expected file formats are .csv"
        )
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise errors.invalid_parameters(f"{name} is not a UTF-8 text file") from None
    numbered = [(n, r) for n, r in enumerate(csv.reader(io.StringIO(text)), start=1) if any(f.strip() for f in r)]
    if len(numbered) < 2:  # the header line, then at least one value
        raise errors.AtlasError(400, "ATLAS-400-00-09B", "No data found in the uploaded file")
    failed: list[JSON] = []
    wanted: dict[str, dict[str, dict[str, Any]]] = {}
    for number, record in numbered[1:]:
        problem = _line(session, registry, record, wanted)
        if problem:
            failed.append({"importStatus": "FAILED", "remarks": f"Line #{number}: {problem}"})
    succeeded: list[JSON] = []
    for guid, values in wanted.items():  # what the file gave each entity, as Atlas names it in the answer
        info = {
            "parentObjectName": guid,
            "childObjectName": _java_map(values),
            "importStatus": "SUCCESS",
            "remarks": "",
        }
        try:
            write_business_attributes(session, registry, guid, values, w.user, "merge", w.placement)
        except errors.AtlasError as exc:
            failed.append({**info, "importStatus": "FAILED", "remarks": exc.message})
            continue
        succeeded.append(info)
    return {"successImportInfoList": succeeded, "failedImportInfoList": failed}


def _line(
    session: Session, registry: TypeRegistry, record: list[str], wanted: dict[str, dict[str, dict[str, Any]]]
) -> str | None:
    """Why a line cannot be applied, else None (its value added to `wanted`)."""
    if len(record) < 4 or not all(field.strip() for field in record[:4]):
        return f"missing fields. {record}"
    type_name, value, attribute, given = (field.strip() for field in record[:4])
    unique = record[4].strip() if len(record) > 4 and record[4].strip() else "qualifiedName"
    if not registry.is_entity_type(type_name):
        return f"invalid entity-type '{type_name}'"
    if unique != "qualifiedName":
        return f"attribute '{unique}' is not an unique attribute in entity-type '{type_name}'"
    row = session.active_entity([type_name, *registry.subtypes(type_name)], value)  # the type or a subtype
    if row is None:
        return f"no {type_name} entity found with {unique}={value}"
    group, _, name = attribute.partition(".")
    definition = registry.get(group)
    declared = {a["name"]: a for a in (definition or {}).get("attributeDefs") or ()}
    if definition is None or definition["category"] != "BUSINESS_METADATA" or name not in declared:
        return f"invalid business-metadata '{attribute}' for entity type '{type_name}'"
    parsed: Any = given.split("|") if declared[name].get("typeName", "").startswith("array<") else given
    wanted.setdefault(row.guid, {}).setdefault(group, {})[name] = parsed
    return None
