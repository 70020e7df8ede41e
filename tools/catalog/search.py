"""Search: Atlas's `POST /search/basic` and Purview's `POST /search/query` (keywords + filter), over the store.

Text matching is a case-insensitive substring of name or qualifiedName; `*` or nothing matches everything.
"""
from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Callable, Iterable

from tools.catalog import errors
from tools.catalog.store import EntityRow, Session
from tools.catalog.typeregistry import TypeRegistry
from tools.catalog.views import entity_header

JSON = dict[str, Any]
Predicate = Callable[[EntityRow], bool]

MAX_LIMIT = 1000
_ASSET_TYPES = {  # type name prefix -> Purview's assetType facet value
    "azure_blob": "Azure Blob Storage", "azure_datalake_gen2": "Azure Data Lake Storage Gen2",
    "azure_datalake_gen1": "Azure Data Lake Storage Gen1", "azure_sql": "Azure SQL Database",
    "azure_synapse": "Azure Synapse Analytics", "mssql": "SQL Server", "azure_postgresql": "Azure Database for PostgreSQL",
    "postgresql": "PostgreSQL", "azure_mysql": "Azure Database for MySQL", "azure_cosmosdb": "Azure Cosmos DB",
    "azure_data_explorer": "Azure Data Explorer", "hive": "Hive", "snowflake": "Snowflake", "databricks": "Databricks",
    "azure_storage": "Azure Storage",
}


def _text(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise errors.invalid_parameters("the search text must be a string")
    value = value.strip()
    return None if value in ("", "*") else value.strip("*")


def _int(body: JSON, key: str, default: int, low: int, high: int) -> int:
    value = body.get(key, default)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise errors.invalid_parameters(f"'{key}' must be an integer from {low} to {high}")
    return value


def _types(registry: TypeRegistry, type_name: str, include_subtypes: bool = True) -> list[str]:
    if not registry.is_entity_type(type_name):
        raise errors.unknown_type(type_name)
    return [type_name, *registry.subtypes(type_name)] if include_subtypes else [type_name]


def basic_search(session: Session, registry: TypeRegistry, body: object) -> JSON:
    """Atlas basic search: `typeName` (with subtypes), `query`, `limit`, `offset`, `excludeDeletedEntities`."""
    if not isinstance(body, dict):
        raise errors.invalid_parameters("the body must be a SearchParameters JSON object")
    type_name, query = body.get("typeName"), _text(body.get("query"))
    if type_name is None and body.get("query") is None:
        raise errors.invalid_search_params()
    types = None if type_name in (None, "_ALL_ENTITY_TYPES") else _types(
        registry, type_name, body.get("includeSubTypes", True) is not False)
    limit, offset = _int(body, "limit", 100, 1, MAX_LIMIT), _int(body, "offset", 0, 0, 2**31)
    rows = session.search(types, query, include_deleted=body.get("excludeDeletedEntities") is False)
    attributes = body.get("attributes") if isinstance(body.get("attributes"), list) else []
    return {"queryType": "BASIC", "searchParameters": body, "approximateCount": len(rows),
            "entities": [entity_header(row, attributes) for row in rows[offset:offset + limit]]}


def _compile(clause: object, registry: TypeRegistry) -> Predicate:
    """A Purview search filter clause as a predicate over entities."""
    if not isinstance(clause, dict) or len(clause) == 0:
        raise errors.invalid_parameters(f"a filter clause must be a non-empty JSON object, got {json.dumps(clause)}")
    if "and" in clause or "or" in clause:
        key = "and" if "and" in clause else "or"
        parts = clause[key]
        if not isinstance(parts, list):
            raise errors.invalid_parameters(f"filter '{key}' must be a list of clauses")
        predicates = [_compile(p, registry) for p in parts]
        return (lambda e: all(p(e) for p in predicates)) if key == "and" else (lambda e: any(p(e) for p in predicates))
    if "not" in clause:
        inner = _compile(clause["not"], registry)
        return lambda e: not inner(e)
    if "entityType" in clause or "typeName" in clause:
        value = clause.get("entityType", clause.get("typeName"))
        if isinstance(value, dict):
            type_name, subtypes = value.get("type"), bool(value.get("includeSubTypes", False))
        else:
            type_name, subtypes = value, bool(clause.get("includeSubTypes", False))
        if not isinstance(type_name, str):
            raise errors.invalid_parameters("filter 'entityType' must name a type")
        allowed = set(_types(registry, type_name, subtypes))
        return lambda e: e.type_name in allowed
    if "qualifiedName" in clause:
        return _attribute_test("qualifiedName", "eq", clause["qualifiedName"])
    if "attributeName" in clause:
        return _attribute_test(clause["attributeName"], str(clause.get("operator", "eq")).lower(),
                               clause.get("attributeValue"))
    if set(clause) <= {"objectType", "assetType", "collectionId", "classification", "term", "label"}:
        return lambda e: True  # facets this catalog does not model: every entity matches
    raise errors.invalid_parameters(f"unsupported filter clause {json.dumps(clause)}")


_OPERATORS: dict[str, Callable[[str, str], bool]] = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "contains": lambda a, b: b.lower() in a.lower(),
    "startswith": lambda a, b: a.lower().startswith(b.lower()), "prefix": lambda a, b: a.lower().startswith(b.lower()),
    "endswith": lambda a, b: a.lower().endswith(b.lower()),
}


def _attribute_test(attribute: object, operator: str, value: object) -> Predicate:
    if isinstance(value, dict):  # {"qualifiedName": {"operator": "contains", "value": "..."}}
        operator, value = str(value.get("operator", "eq")).lower(), value.get("value")
    if not isinstance(attribute, str) or not isinstance(value, str):
        raise errors.invalid_parameters("an attribute filter needs 'attributeName' and a string 'attributeValue'")
    test = _OPERATORS.get(operator)
    if test is None:
        raise errors.invalid_parameters(f"unsupported filter operator '{operator}' (use one of {sorted(_OPERATORS)})")

    def predicate(e: EntityRow) -> bool:
        actual = e.qualified_name if attribute == "qualifiedName" else e.attributes.get(attribute)
        return isinstance(actual, str) and test(actual, value)
    return predicate


def _asset_type(type_name: str) -> list[str]:
    for prefix, label in _ASSET_TYPES.items():
        if type_name.startswith(prefix):
            return [label]
    return []


def purview_query(session: Session, registry: TypeRegistry, body: object) -> JSON:
    """Purview discovery query: `keywords`, `filter`, `limit`, `continuationToken` (or `offset`)."""
    if not isinstance(body, dict):
        raise errors.invalid_parameters("the body must be a JSON object")
    predicate = _compile(body["filter"], registry) if body.get("filter") is not None else (lambda e: True)
    limit = _int(body, "limit", 50, 1, MAX_LIMIT)
    offset = _int(body, "offset", 0, 0, 2**31)
    token = body.get("continuationToken")
    if token:
        try:
            offset = int(json.loads(base64.b64decode(token))["offset"])
        except (binascii.Error, ValueError, KeyError, TypeError) as exc:
            raise errors.invalid_parameters("continuationToken is not one this catalog issued") from exc
    rows = [row for row in session.search(None, _text(body.get("keywords"))) if predicate(row)]
    page = rows[offset:offset + limit]
    response: JSON = {"@search.count": len(rows), "@search.count.approximate": False}
    if offset + limit < len(rows):
        response["continuationToken"] = base64.b64encode(json.dumps({"offset": offset + limit}).encode()).decode()
    response["value"] = [
        {"@search.score": 1.0, "id": row.guid, "qualifiedName": row.qualified_name, "name": row.name,
         "description": row.attributes.get("description"), "owner": row.attributes.get("owner"),
         "entityType": row.type_name, "classification": [], "label": [], "assetType": _asset_type(row.type_name),
         "term": [], "contact": []}
        for row in page]
    return response


_BASIC_INT_PARAMETERS = ("limit", "offset")
_BASIC_FLAG_PARAMETERS = ("excludeDeletedEntities", "includeSubTypes", "includeClassificationAttributes")


def basic_search_parameters(query: Iterable[tuple[str, str]]) -> JSON:
    """`GET /search/basic?typeName=&query=&limit=...` as the SearchParameters body of the POST form."""
    body: JSON = {}
    for key, value in query:
        if key in _BASIC_INT_PARAMETERS:
            try:
                body[key] = int(value)
            except ValueError:
                raise errors.invalid_parameters(f"'{key}' must be an integer, got '{value}'") from None
        elif key in _BASIC_FLAG_PARAMETERS:
            body[key] = value.lower() == "true"
        elif key in ("typeName", "query", "classification", "termName", "sortBy", "sortOrder"):
            body[key] = value
    return body


def _keywords(body: object, what: str) -> tuple[JSON, str]:
    if not isinstance(body, dict):
        raise errors.invalid_parameters("the body must be a JSON object")
    keywords = body.get("keywords")
    if not isinstance(keywords, str) or not keywords.strip():
        raise errors.invalid_parameters(f"{what} needs 'keywords' with at least one character")
    return body, keywords.strip()


def _prefix_at(text: str, prefix: str) -> int:
    """Where a word of `text` starts with `prefix` (case-insensitive), or -1."""
    lowered, wanted = text.lower(), prefix.lower()
    start = lowered.find(wanted)
    while start != -1:
        if start == 0 or not lowered[start - 1].isalnum():
            return start
        start = lowered.find(wanted, start + 1)
    return -1


def _prefixed(session: Session, registry: TypeRegistry, body: JSON, keywords: str) -> list[tuple[EntityRow, str, int]]:
    """Active entities with a word of their name (else qualifiedName) starting with `keywords`: (row, text, where)."""
    predicate = _compile(body["filter"], registry) if body.get("filter") is not None else (lambda e: True)
    found = []
    for row in session.search(None, keywords):
        for text in (row.name or "", row.qualified_name):
            where = _prefix_at(text, keywords)
            if where != -1:
                if predicate(row):
                    found.append((row, text, where))
                break
    return found


def suggest(session: Session, registry: TypeRegistry, body: object) -> JSON:
    """Purview `POST /search/suggest`: records with a word starting with `keywords`, the prefix wrapped in <em>."""
    body, keywords = _keywords(body, "suggest")
    limit = _int(body, "limit", 5, 1, 100)
    value = []
    for row, text, where in _prefixed(session, registry, body, keywords)[:limit]:
        end = where + len(keywords)
        value.append({
            "@search.score": 1.0, "@search.text": f"{text[:where]}<em>{text[where:end]}</em>{text[end:]}",
            "objectType": _object_type(registry, row.type_name), "createTime": row.create_time,
            "updateTime": row.update_time, "id": row.guid, "name": row.name, "qualifiedName": row.qualified_name,
            "entityType": row.type_name, "description": row.attributes.get("description"), "endorsement": [],
            "owner": row.attributes.get("owner"), "classification": [], "label": [], "term": [], "contact": [],
            "assetType": _asset_type(row.type_name)})
    return {"value": value}


def autocomplete(session: Session, registry: TypeRegistry, body: object) -> JSON:
    """Purview `POST /search/autocomplete`: distinct completions of `keywords` from names and qualifiedNames."""
    body, keywords = _keywords(body, "autocomplete")
    limit = _int(body, "limit", 50, 1, 100)
    completions: dict[str, None] = {}
    for _row, text, where in _prefixed(session, registry, body, keywords):
        completions.setdefault(text[where:], None)
        if len(completions) == limit:
            break
    return {"value": [{"text": text, "queryPlusText": text} for text in completions]}


def _object_type(registry: TypeRegistry, type_name: str) -> str:
    """Purview's top-level objectType facet, approximated from the type."""
    if registry.is_a(type_name, "Process"):
        return "Processes"
    if "column" in type_name:
        return "Columns"
    if "table" in type_name or "collection" in type_name:
        return "Tables"
    if registry.is_a(type_name, "DataSet"):
        return "Files"
    return "Other"
