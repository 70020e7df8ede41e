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

from . import business_metadata, errors
from .mutations import write_business_attributes
from .store import Session
from .typeregistry import TypeRegistry

JSON = dict[str, Any]

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


def _java_map(values: dict[str, Any]) -> str:
    """A map as Java's Map.toString writes it (`{a={b=c}}`), which is how Atlas names what it imported."""
    return "{" + ", ".join(f"{k}={_java_map(v) if isinstance(v, dict) else v}" for k, v in values.items()) + "}"


def import_file(session: Session, registry: TypeRegistry, name: str, content: bytes, user: str) -> JSON:
    """BulkImportResult: one success per entity (its guid, the business attributes it now carries), one failure
    per line that could not be applied (why)."""
    if not name.lower().endswith(".csv"):
        raise errors.AtlasError(
            400, "ATLAS-400-00-09C", f"The provided file type: {name} is not supported. Expected file formats are .csv"
        )
    lines = list(csv.reader(io.StringIO(content.decode("utf-8-sig"))))[1:]
    failed: list[JSON] = []
    wanted: dict[str, dict[str, dict[str, Any]]] = {}
    for number, record in enumerate((r for r in lines if len(r) > 1), start=2):
        problem = _line(session, registry, record, wanted)
        if problem:
            failed.append({"importStatus": "FAILED", "remarks": f"Line #{number}: {problem}"})
    if not lines:
        raise errors.AtlasError(400, "ATLAS-400-00-09B", "No data found in the uploaded file")
    succeeded: list[JSON] = []
    for guid, values in wanted.items():
        try:
            write_business_attributes(session, registry, guid, values, user, "merge")
        except errors.AtlasError as exc:
            failed.append(
                {
                    "parentObjectName": guid,
                    "childObjectName": _java_map(values),
                    "importStatus": "FAILED",
                    "remarks": exc.message,
                }
            )
            continue
        row = session.entity(guid)
        carried = business_metadata.of(row.extra) if row else values
        succeeded.append(
            {"parentObjectName": guid, "childObjectName": _java_map(carried), "importStatus": "SUCCESS", "remarks": ""}
        )
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
    row = session.active_entity([type_name], value)
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
