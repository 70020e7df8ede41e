"""Search: Atlas's `POST /search/basic` and Purview's `POST /search/query` (keywords + filter), over the store.

Text matching is a case-insensitive substring of name or qualifiedName; `*` or nothing matches everything.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import time
from typing import Any, Callable, Iterable

from olparser.jsontypes import JSON

from . import errors, glossary
from .classifications import names, of_entities
from .store import EntityRow, Session
from .typeregistry import TypeRegistry
from .views import headers, meanings_of

Predicate = Callable[[EntityRow], bool]

MAX_LIMIT = 1000
_ASSET_TYPES = {  # type name prefix -> Purview's assetType facet value
    "azure_blob": "Azure Blob Storage",
    "azure_datalake_gen2": "Azure Data Lake Storage Gen2",
    "azure_datalake_gen1": "Azure Data Lake Storage Gen1",
    "azure_sql": "Azure SQL Database",
    "azure_synapse": "Azure Synapse Analytics",
    "mssql": "SQL Server",
    "azure_postgresql": "Azure Database for PostgreSQL",
    "postgresql": "PostgreSQL",
    "azure_mysql": "Azure Database for MySQL",
    "azure_cosmosdb": "Azure Cosmos DB",
    "azure_data_explorer": "Azure Data Explorer",
    "hive": "Hive",
    "snowflake": "Snowflake",
    "databricks": "Databricks",
    "azure_storage": "Azure Storage",
    "azure_file": "Azure Files",
    "aws_s3": "Amazon S3",
    "fabric": "Microsoft Fabric",
    # the scanned types of these sources in public Purview code (a data-estate export's type -> object type table)
    "oracle": "Oracle",
    "teradata": "Teradata",
    "cassandra": "Cassandra",
    "bigquery": "Google BigQuery",
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
    types = (
        None
        if type_name in (None, "_ALL_ENTITY_TYPES")
        else _types(registry, type_name, body.get("includeSubTypes", True) is not False)
    )
    limit, offset = _int(body, "limit", 100, 1, MAX_LIMIT), _int(body, "offset", 0, 0, 2**31)
    rows = session.search(types, query, include_deleted=body.get("excludeDeletedEntities") is False)
    attributes = body.get("attributes") if isinstance(body.get("attributes"), list) else []
    return {
        "queryType": "BASIC",
        "searchParameters": body,
        "approximateCount": len(rows),
        "entities": headers(session, rows[offset : offset + limit], attributes),
    }


_TIME_RANGES_MS = {
    "LAST_24H": 86_400_000,
    "LAST_7D": 7 * 86_400_000,
    "LAST_30D": 30 * 86_400_000,
    "LAST_365D": 365 * 86_400_000,
}
_MORE_THAN_365D = "MORE_THAN_365D"
_SYSTEM_TIMES = ("createTime", "updateTime")
# facets of Purview's index this catalog keeps no data for: a filter on them matches nothing (so `not` matches all)
_UNMODELLED = frozenset({"domainId"})


class _Index:
    """What the discovery index holds about entities beyond their rows, loaded for the rows a query reads:
    classifications (own and propagated), glossary terms assigned, the glossary of a term."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.classifications: dict[str, list[str]] = {}
        self.terms: dict[str, list[JSON]] = {}
        self.glossary_of: dict[str, str | None] = {}

    def load(self, rows: list[EntityRow]) -> list[EntityRow]:
        carried = of_entities(self.session, rows)
        meanings = meanings_of(self.session, [row.guid for row in rows])
        term_guids = {m["termGuid"] for found in meanings.values() for m in found}
        term_guids |= {row.guid for row in rows if row.type_name == glossary.TERM}
        for guid, term in self.session.entities(term_guids).items():
            anchor = glossary.anchor_of(self.session, term)
            self.glossary_of[guid] = anchor[1].name if anchor else None
        for row in rows:
            self.classifications[row.guid] = names(carried[row.guid])
            self.terms[row.guid] = [
                {"name": m["displayText"], "glossaryName": self.glossary_of.get(m["termGuid"]), "guid": m["termGuid"]}
                for m in meanings[row.guid]
            ]
        return rows


def _contacts(row: EntityRow) -> list[JSON]:
    """An entity's contacts as the index answers them: {id, info, contactType} (contactType: Expert, Owner)."""
    contacts = (
        row.extra.get("contacts") if row.type_name != glossary.TERM else glossary.term_fields(row).get("contacts")
    )
    return [
        {"id": c.get("id"), "info": c.get("info"), "contactType": kind}
        for kind, items in (contacts or {}).items()
        if isinstance(items, list)
        for c in items
        if isinstance(c, dict)
    ]


def _term_status(row: EntityRow) -> str | None:
    return glossary.term_fields(row).get("status", "Draft") if row.type_name == glossary.TERM else None


def _term_templates(row: EntityRow) -> list[str]:
    return list(glossary.term_fields(row).get("templateName") or []) if row.type_name == glossary.TERM else []


def _compile(clause: object, registry: TypeRegistry, now_ms: int, index: _Index) -> Predicate:
    """A Purview discovery filter clause (Data Map 2023-09-01, Discovery - Query) as a predicate over entities:
    `and`/`or` lists, `not`, `entityType` (+ `includeSubTypes`), `objectType`, `assetType`, `id`, `fileExtension`,
    `classification`, `label`, `collectionId`, `createTime`/`updateTime` (`{operator, timeThreshold}` or a time
    range), and `{attributeName, operator, attributeValue}`."""
    if not isinstance(clause, dict) or len(clause) == 0:
        raise errors.invalid_parameters(f"a filter clause must be a non-empty JSON object, got {json.dumps(clause)}")
    if isinstance(clause.get("kind"), str) and len(clause) > 1:
        # the spec's typed form ({"kind": "AndFilter", "and": [...]}, {"kind": "ObjectTypeFilter", "objectType":
        # ...}): the same clause with its discriminator
        clause = {k: v for k, v in clause.items() if k != "kind"}
    if "and" in clause or "or" in clause:
        key = "and" if "and" in clause else "or"
        parts = clause[key]
        if not isinstance(parts, list) or not parts:
            raise errors.invalid_parameters(f"filter '{key}' must be a non-empty list of clauses")
        predicates = [_compile(p, registry, now_ms, index) for p in parts]
        return (lambda e: all(p(e) for p in predicates)) if key == "and" else (lambda e: any(p(e) for p in predicates))
    if "not" in clause:
        inner = _compile(clause["not"], registry, now_ms, index)
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
    if "attributeName" in clause:
        return _attribute_test(
            clause["attributeName"], clause.get("operator", "eq"), clause.get("attributeValue"), now_ms
        )
    if "classification" in clause and isinstance(clause.get("includeSubClassifications"), bool):
        clause = {"classification": clause["classification"]}  # no classification hierarchy here: the same test
    if set(clause) == {"term", "glossary"}:  # a term of one glossary
        term, named = clause["term"], clause["glossary"]
        return lambda e: any(t["name"] == term and t["glossaryName"] == named for t in index.terms.get(e.guid, ()))
    if len(clause) != 1:
        raise errors.invalid_parameters(f"a filter clause names one field, got {json.dumps(clause)}")
    ((key, value),) = clause.items()
    if key in _SYSTEM_TIMES:
        if isinstance(value, dict):
            return _attribute_test(key, value.get("operator"), value.get("timeThreshold"), now_ms)
        return _attribute_test(key, "timerange", value, now_ms)
    if key == "qualifiedName":
        return _attribute_test("qualifiedName", "eq", value, now_ms)
    if not isinstance(value, str):
        raise errors.invalid_parameters(f"filter '{key}' must be a string, got {json.dumps(value)}")
    if key == "objectType":
        return lambda e: _object_type(registry, e.type_name) == value
    if key == "assetType":
        return lambda e: value in _asset_type(registry, e.type_name)
    if key == "id":
        return lambda e: e.guid == value
    if key == "fileExtension":
        suffix = "." + value.lower().lstrip(".")
        return lambda e: (e.name or "").lower().endswith(suffix)
    if key == "classification":
        return lambda e: value in index.classifications.get(e.guid, ())
    if key == "label":
        return lambda e: value in (e.extra.get("labels") or [])
    if key == "term":
        return lambda e: any(t["name"] == value for t in index.terms.get(e.guid, ()))
    if key == "termGuid":
        return lambda e: any(t["guid"] == value for t in index.terms.get(e.guid, ()))
    if key == "glossary":
        return lambda e: (
            index.glossary_of.get(e.guid) == value or (e.type_name == glossary.GLOSSARY and e.name == value)
        )
    if key == "glossaryType":
        return lambda e: e.type_name == value and e.type_name in (glossary.GLOSSARY, glossary.TERM)
    if key == "termStatus":
        return lambda e: _term_status(e) == value
    if key == "termTemplate":
        return lambda e: value in _term_templates(e)
    if key == "contactId":
        return lambda e: any(c["id"] == value for c in _contacts(e))
    if key == "contactType":
        return lambda e: any(c["contactType"] == value for c in _contacts(e))
    if key == "collectionId":
        return lambda e: e.extra.get("collectionId") == value
    if key in _UNMODELLED:
        return lambda e: False
    raise errors.invalid_parameters(f"unsupported filter clause {json.dumps(clause)}")


def _lower(test: Callable[[str, str], bool]) -> Callable[[object, object], bool]:
    return lambda a, b: isinstance(a, str) and isinstance(b, str) and test(a.lower(), b.lower())


def _ordered(test: Callable[[float, float], bool]) -> Callable[[object, object], bool]:
    def compare(a: object, b: object) -> bool:
        numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
        # Why the type error is ignored: both are numbers (checked just before)
        return numbers and test(a, b)  # type: ignore[arg-type]

    return compare


_OPERATORS: dict[str, Callable[[object, object], bool]] = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "contains": _lower(lambda a, b: b in a),
    "startswith": _lower(str.startswith),
    "prefix": _lower(str.startswith),
    "endswith": _lower(str.endswith),
    "lt": _ordered(lambda a, b: a < b),
    "le": _ordered(lambda a, b: a <= b),
    "gt": _ordered(lambda a, b: a > b),
    "ge": _ordered(lambda a, b: a >= b),
}


def _attribute_value(row: EntityRow, attribute: str) -> object:
    if attribute == "qualifiedName":
        return row.qualified_name
    if attribute == "createTime":
        return row.create_time
    if attribute == "updateTime":
        return row.update_time
    if attribute not in row.attributes and "." in attribute:  # "<business metadata>.<attribute>"
        group, _, name = attribute.partition(".")
        return (row.extra.get("businessAttributes") or {}).get(group, {}).get(name)
    return row.attributes.get(attribute)


def _attribute_test(attribute: object, operator: object, value: object, now_ms: int) -> Predicate:
    if isinstance(value, dict):  # {"qualifiedName": {"operator": "contains", "value": "..."}}
        operator, value = value.get("operator", "eq"), value.get("value")
    if not isinstance(attribute, str) or not attribute:
        raise errors.invalid_parameters("an attribute filter needs 'attributeName'")
    if not isinstance(operator, str):
        raise errors.invalid_parameters(f"filter on '{attribute}' needs an 'operator'")
    operator = operator.lower()
    if operator == "timerange":
        if value != _MORE_THAN_365D and value not in _TIME_RANGES_MS:
            raise errors.invalid_parameters(
                f"time range on '{attribute}' must be one of {[*_TIME_RANGES_MS, _MORE_THAN_365D]}, got {json.dumps(value)}"
            )

        def in_range(e: EntityRow) -> bool:
            actual = _attribute_value(e, attribute)
            if not isinstance(actual, (int, float)) or isinstance(actual, bool):
                return False
            age = now_ms - actual
            return age > _TIME_RANGES_MS["LAST_365D"] if value == _MORE_THAN_365D else age <= _TIME_RANGES_MS[value]

        return in_range
    test = _OPERATORS.get(operator)
    if test is None:
        raise errors.invalid_parameters(
            f"unsupported filter operator '{operator}' (use one of {sorted([*_OPERATORS, 'timerange'])})"
        )
    if value is None or isinstance(value, (dict, list)):
        raise errors.invalid_parameters(f"filter on '{attribute}' needs a string, number or boolean 'attributeValue'")
    return lambda e: test(_attribute_value(e, attribute), value)


def _asset_type(registry: TypeRegistry, type_name: str) -> list[str]:
    """The source an asset's type belongs to, as Purview's `assetType` names it: by the built-in type's name, else the
    `serviceType` its typedef declares (a source's types registered here, e.g. an Oracle scan's)."""
    for prefix, label in _ASSET_TYPES.items():
        if type_name.startswith(prefix):
            return [label]
    service = _service_type(registry, type_name)
    return [service] if service else []


def _service_type(registry: TypeRegistry, type_name: str) -> str | None:
    typedef = registry.get(type_name)
    if typedef is None:
        return None
    if isinstance(typedef.get("serviceType"), str) and typedef["serviceType"].strip():
        return str(typedef["serviceType"]).strip()
    return None


_ORDER_FIELDS: dict[str, Callable[[EntityRow], Any]] = {
    "name": lambda e: (e.name or "").lower(),
    "qualifiedName": lambda e: e.qualified_name,
    "entityType": lambda e: e.type_name,
    "createTime": lambda e: e.create_time,
    "updateTime": lambda e: e.update_time,
    "id": lambda e: e.guid,
}


def _sorted(rows: list[EntityRow], orderby: object) -> list[EntityRow]:
    """`orderby: [{"name": "ASC"}, {"updateTime": "DESC"}]`: the first field first; ties keep the catalog's order."""
    if orderby is None:
        return rows
    if not isinstance(orderby, list) or not all(isinstance(o, dict) and len(o) == 1 for o in orderby):
        raise errors.invalid_parameters('orderby must be a list of {"field": "ASC"|"DESC"} objects')
    for item in reversed(orderby):
        ((field, direction),) = item.items()
        key = _ORDER_FIELDS.get(field)
        if key is None or not isinstance(direction, str) or direction.upper() not in ("ASC", "DESC"):
            raise errors.invalid_parameters(
                f"orderby {json.dumps(item)}: sort by one of {sorted(_ORDER_FIELDS)}, ASC or DESC"
            )
        rows = sorted(rows, key=key, reverse=direction.upper() == "DESC")
    return rows


def _request_hash(keywords: str | None, body: JSON) -> str:
    """What a continuation token belongs to: the same keywords, filter and order (Purview's tokens carry one too)."""
    canonical = json.dumps([keywords, body.get("filter"), body.get("orderby")], sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def _record(registry: TypeRegistry, index: _Index, row: EntityRow) -> JSON:
    """A search result as Purview's index answers it (the spec's SearchResultValue): an asset with its
    classifications, labels, glossary terms and contacts; a glossary or term with its glossary fields."""
    record: JSON = {
        "@search.score": 1.0,
        "objectType": _object_type(registry, row.type_name),
        "id": row.guid,
        "qualifiedName": row.qualified_name,
        "name": row.name,
        "entityType": row.type_name,
        "createTime": row.create_time,
        "updateTime": row.update_time,
    }
    if row.type_name in (glossary.GLOSSARY, glossary.TERM):
        record |= {"glossaryType": row.type_name, "longDescription": row.attributes.get("longDescription")}
        if row.type_name == glossary.TERM:
            record |= {
                "glossary": index.glossary_of.get(row.guid),
                "termStatus": _term_status(row),
                "termTemplate": _term_templates(row),
            }
        return record
    return record | {
        "description": row.attributes.get("description"),
        "owner": row.attributes.get("owner"),
        "classification": index.classifications.get(row.guid, []),
        "label": list(row.extra.get("labels") or []),
        "assetType": _asset_type(registry, row.type_name),
        "term": [{"name": t["name"], "glossaryName": t["glossaryName"]} for t in index.terms.get(row.guid, ())],
        "contact": _contacts(row),
    }


# facet -> what a record holds of it
_FACETS: dict[str, Callable[[JSON], list[Any]]] = {
    "entityType": lambda r: [r["entityType"]],
    "assetType": lambda r: list(r.get("assetType") or ()),
    "classification": lambda r: list(r.get("classification") or ()),
    "term": lambda r: [t["name"] for t in r.get("term") or ()],
    "contactId": lambda r: [c["id"] for c in r.get("contact") or ()],
    "contactType": lambda r: [c["contactType"] for c in r.get("contact") or ()],
    "label": lambda r: list(r.get("label") or ()),
    "glossaryType": lambda r: [r["glossaryType"]] if r.get("glossaryType") else [],
    "termStatus": lambda r: [r["termStatus"]] if r.get("termStatus") else [],
    "termTemplate": lambda r: list(r.get("termTemplate") or ()),
}


def _facets(wanted: object, records: list[JSON]) -> JSON:
    """`@search.facets`: per facet asked, `{count, value}` over every record that matched, most frequent first
    unless `sort` says `{"count"|"value": "asc"|"desc"}`; `count` values at most (0: all of them)."""
    if not isinstance(wanted, list) or not all(isinstance(f, dict) for f in wanted):
        raise errors.invalid_parameters('facets must be a list of {"facet": "<field>", "count": <n>}')
    found: JSON = {}
    for item in wanted:
        name, count, order = item.get("facet"), item.get("count", 10), item.get("sort") or {"count": "desc"}
        if name not in _FACETS:
            raise errors.invalid_parameters(f"facet must be one of {sorted(_FACETS)}, got {json.dumps(name)}")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise errors.invalid_parameters(f"facet {name}: count must be 0 or more")
        if not isinstance(order, dict) or len(order) != 1 or next(iter(order)) not in ("count", "value"):
            raise errors.invalid_parameters(f'facet {name}: sort is {{"count"|"value": "asc"|"desc"}}')
        ((by, direction),) = order.items()
        tally: dict[str, int] = {}
        for record in records:
            for value in dict.fromkeys(_FACETS[name](record)):
                tally[str(value)] = tally.get(str(value), 0) + 1
        ranked = sorted(tally.items(), key=lambda kv: kv[0])
        ranked.sort(key=(lambda kv: kv[1]) if by == "count" else (lambda kv: kv[0]), reverse=direction == "desc")
        found[name] = [{"count": n, "value": v} for v, n in (ranked[:count] if count else ranked)]
    return found


_HIGHLIGHTED = ("id", "qualifiedName", "name", "description", "entityType")
_WORD = re.compile(r"[A-Za-z0-9]+")


def _highlight_terms(keywords: str | None, clause: object, terms: dict[str, set[str]]) -> dict[str, set[str]]:
    """The words a result is highlighted for, per field: the keywords' words in every field, a `contains` filter's
    words in its own field."""
    for word in _WORD.findall(keywords or ""):
        for field in _HIGHLIGHTED:
            terms.setdefault(field, set()).add(word.lower())
    if isinstance(clause, dict):
        if clause.get("operator") in ("contains", "eq") and clause.get("attributeName") in _HIGHLIGHTED:
            for word in _WORD.findall(str(clause.get("attributeValue"))):
                terms.setdefault(clause["attributeName"], set()).add(word.lower())
        for key in ("and", "or"):
            for part in clause.get(key) or () if isinstance(clause.get(key), list) else ():
                _highlight_terms(None, part, terms)
    return terms


def _highlights(record: JSON, terms: dict[str, set[str]]) -> JSON:
    """`@search.highlights`: each field where a word matched, the matches wrapped in <em>."""
    found: JSON = {}
    for field, words in terms.items():
        text = record.get(field)
        if not isinstance(text, str) or not words:
            continue
        pattern = re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)), re.IGNORECASE)
        marked = pattern.sub(lambda m: f"<em>{m.group(0)}</em>", text)
        if marked != text:
            found[field] = [marked]
    return found


def purview_query(session: Session, registry: TypeRegistry, body: object, now_ms: int | None = None) -> JSON:
    """Purview discovery query: `keywords`, `filter`, `orderby`, `limit` (1..1000, default 50), `facets` and
    `continuationToken` (or `offset`); the answer `{"@search.count", "@search.count.approximate", "value",
    "@search.facets" when asked, "continuationToken" while more remain}`, each value with `@search.highlights` where
    the keywords or a `contains` filter matched. `taxonomySetting` is accepted and does not change the answer."""
    if not isinstance(body, dict):
        raise errors.invalid_parameters("the body must be a JSON object")
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    index = _Index(session)
    predicate = (
        _compile(body["filter"], registry, now_ms, index) if body.get("filter") is not None else (lambda e: True)
    )
    limit = _int(body, "limit", 50, 1, MAX_LIMIT)
    offset = _int(body, "offset", 0, 0, 2**31)
    keywords = _text(body.get("keywords"))
    request_hash = _request_hash(keywords, body)
    token = body.get("continuationToken")
    if token:
        try:
            state = json.loads(base64.b64decode(token, validate=True))
            offset, issued_for = int(state["offset"]), state["requestHash"]
        except (binascii.Error, ValueError, KeyError, TypeError) as exc:
            raise errors.invalid_parameters("continuationToken is not one this catalog issued") from exc
        if issued_for != request_hash or offset < 0:
            raise errors.invalid_parameters("continuationToken belongs to another query (keywords, filter, orderby)")
    candidates = index.load(session.search(None, keywords))
    rows = _sorted([row for row in candidates if predicate(row)], body.get("orderby"))
    response: JSON = {"@search.count": len(rows), "@search.count.approximate": False}
    if offset + limit < len(rows):
        response["continuationToken"] = base64.b64encode(
            json.dumps({"offset": offset + limit, "requestHash": request_hash}).encode()
        ).decode()
    if body.get("facets") is not None:
        response["@search.facets"] = _facets(body["facets"], [_record(registry, index, row) for row in rows])
    terms = _highlight_terms(keywords, body.get("filter"), {})
    response["value"] = []
    for row in rows[offset : offset + limit]:
        record = _record(registry, index, row)
        highlights = _highlights(record, terms)
        response["value"].append({**({"@search.highlights": highlights} if highlights else {}), **record})
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


def _prefixed(
    session: Session, registry: TypeRegistry, body: JSON, keywords: str, index: _Index
) -> list[tuple[EntityRow, str, int]]:
    """Active entities with a word of their name (else qualifiedName) starting with `keywords`: (row, text, where)."""
    predicate = (
        _compile(body["filter"], registry, int(time.time() * 1000), index)
        if body.get("filter") is not None
        else (lambda e: True)
    )
    found = []
    for row in index.load(session.search(None, keywords)):
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
    index = _Index(session)
    for row, text, where in _prefixed(session, registry, body, keywords, index)[:limit]:
        end = where + len(keywords)
        marked = f"{text[:where]}<em>{text[where:end]}</em>{text[end:]}"
        value.append({"@search.text": marked, **_record(registry, index, row)})
    return {"value": value}


def autocomplete(session: Session, registry: TypeRegistry, body: object) -> JSON:
    """Purview `POST /search/autocomplete`: distinct completions of `keywords` from names and qualifiedNames."""
    body, keywords = _keywords(body, "autocomplete")
    limit = _int(body, "limit", 50, 1, 100)
    completions: dict[str, None] = {}
    for _row, text, where in _prefixed(session, registry, body, keywords, _Index(session)):
        completions.setdefault(text[where:], None)
        if len(completions) == limit:
            break
    return {"value": [{"text": text, "queryPlusText": text} for text in completions]}


def _object_type(registry: TypeRegistry, type_name: str) -> str:
    """Purview's top-level objectType facet, approximated from the type."""
    if type_name in (glossary.GLOSSARY, glossary.TERM):
        return "Glossary terms"
    if registry.is_a(type_name, "Process"):
        return "Processes"
    if "column" in type_name:
        return "Columns"
    if type_name.endswith(("_filesystem", "_container", "_share", "_bucket", "_directory")):
        return "Folders"
    if "table" in type_name or "collection" in type_name:
        return "Tables"
    if registry.is_a(type_name, "DataSet"):
        return "Files"
    return "Other"
