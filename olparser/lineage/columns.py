"""Column lineage of one output: Purview's `columnMapping` and the full detail, from the `columnLineage` facet.

`columnMapping` is Purview's format, a JSON string with one object per (input dataset, output dataset) pair:
`[{"DatasetMapping": {"Source": in qn, "Sink": out qn}, "ColumnMapping": [{"Source": col, "Sink": col}]}]`, with
only DIRECT dependencies (an input field without `transformations`, as older producers send, is direct).
`columnLineageDetail` keeps everything (DIRECT and INDIRECT, subtypes, descriptions, masking, the deprecated
`transformationType`/`transformationDescription`, the facet's top-level `dataset[]`) as a JSON string.
Everything is sorted, so the same facet always gives the same text.

Speed (a facet has thousands of input fields): each input dataset is mapped once per facet, a list of
transformations is normalised once per distinct list (`_transformations`, a cache keyed by orjson's text of the list,
bounded in entries and size), and both texts are assembled from pieces encoded once — the same bytes `json.dumps`
(compact, not ASCII-escaped) writes for the detail object `{"dataset": [...], "fields": [{"field", "inputFields",
...}]}` and for the mapping list.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any, Callable, NamedTuple

from orjson import JSONEncodeError
from orjson import dumps as _dumps

from .datasets import ResolvedDataset

ResolveName = Callable[[str, str], ResolvedDataset]
SkipName = Callable[[str, str], bool]
_CACHE_SIZE = 4096  # distinct transformation lists kept (a few per producer in practice)
_CACHED_CHARS = 1024  # of JSON text at most, so that the cache holds a few MB whatever is sent


@dataclass(frozen=True)
class ColumnLineage:
    column_mapping: str
    detail: str
    sources: tuple[ResolvedDataset, ...]  # every dataset the facet names, sorted by (type, qualifiedName)
    skipped: frozenset[tuple[str, str]] = frozenset()  # (namespace, name) of the temporary datasets it names


class _Transformations(NamedTuple):
    """One list of transformations as the detail writes it: its JSON text, its `repr` (the sort key) and whether
    it makes the dependency direct."""

    text: str
    sort_key: str
    direct: bool


# One well-formed input field: (qualifiedName, field, typeName, namespace, name, transformations' repr, its JSON
# text); the text follows from the rest, so the tuple sorts as its first six do.
_InputField = tuple[str, str, str, str, str, str, str]
_Skipped = tuple[None, None, None, None]
_SKIPPED: _Skipped = (None, None, None, None)  # what `_Datasets.add` gives for a skipped dataset


class _Datasets:
    """The facet's input datasets, each mapped once, with the JSON text pieces of its detail entries."""

    def __init__(self, resolve: ResolveName, skip: SkipName | None = None):
        self._resolve = resolve
        self._skip = skip
        self.skipped: set[tuple[str, str]] = set()
        # (namespace, name) -> (qualifiedName, typeName, the text between `field` and `transformations`, the end)
        self.known: dict[tuple[str, str], tuple[str, str, str, str]] = {}
        self.sources: dict[tuple[str, str], ResolvedDataset] = {}  # the first dataset met per (type, qn)

    def add(self, namespace: str, name: str) -> tuple[str, str, str, str] | _Skipped:
        """The dataset's pieces, mapped now; `_SKIPPED` (its `middle` is None) for a dataset `skip` names (a
        temporary one: no column of it)."""
        if self._skip is not None and self._skip(namespace, name):
            self.skipped.add((namespace, name))
            return _SKIPPED
        dataset = self._resolve(namespace, name)
        self.sources.setdefault(dataset.key, dataset)
        middle = (
            f',"name":{encode_basestring(name)},"namespace":{encode_basestring(namespace)},'
            f'"qualifiedName":{encode_basestring(dataset.qualified_name)},"transformations":'
        )
        known = self.known[(namespace, name)] = (
            dataset.qualified_name,
            dataset.type_name,
            middle,
            f',"typeName":{encode_basestring(dataset.type_name)}}}',
        )
        return known


def column_lineage(
    facet: Any, output: ResolvedDataset, resolve: ResolveName, skip: SkipName | None = None
) -> ColumnLineage | None:
    """The column lineage of `output` from its `columnLineage` facet, or None when there is no usable facet.
    Input fields of the datasets `skip` names (temporary ones) are left out, and listed in `skipped`."""
    if not isinstance(facet, dict) or not isinstance(facet.get("fields"), dict):
        return None
    fields = facet["fields"]
    datasets = _Datasets(resolve, skip)
    pairs: dict[str, set[tuple[str, str]]] = {}
    fields_text = []
    encode = encode_basestring
    for sink_column in sorted(fields):
        spec = fields[sink_column]
        if spec.__class__ is not dict and not isinstance(spec, dict):
            continue
        inputs = _input_fields(spec.get("inputFields"), datasets, pairs, sink_column)
        legacy = ""  # the deprecated per-field keys, when sent as text
        if "transformationDescription" in spec or "transformationType" in spec:
            for key in ("transformationDescription", "transformationType"):
                if isinstance(spec.get(key), str):
                    legacy += f',"{key}":{encode(spec[key])}'
        fields_text.append(f'{{"field":{encode(sink_column)},"inputFields":[{inputs}]{legacy}}}')
    dataset_text = _input_fields(facet.get("dataset"), datasets, None, "")
    sources = datasets.sources
    return ColumnLineage(
        column_mapping=_column_mapping(pairs, output.qualified_name),
        detail=f'{{"dataset":[{dataset_text}],"fields":[{",".join(fields_text)}]}}',
        sources=tuple(sources[key] for key in sorted(sources)),
        skipped=frozenset(datasets.skipped) if datasets.skipped else _NOTHING_SKIPPED,
    )


def _column_mapping(pairs: dict[str, set[tuple[str, str]]], sink: str) -> str:
    """Purview's columnMapping text: what `json.dumps` (compact, not ASCII-escaped) writes for
    `[{"DatasetMapping": {"Source", "Sink"}, "ColumnMapping": [{"Source", "Sink"}...]}...]`, sources in order."""
    encode = encode_basestring
    sink_text = encode(sink)
    entries = [
        f'{{"DatasetMapping":{{"Source":{encode(source)},"Sink":{sink_text}}},"ColumnMapping":['
        + ",".join([f'{{"Source":{encode(a)},"Sink":{encode(b)}}}' for a, b in sorted(columns)])
        + "]}"
        for source, columns in sorted(pairs.items())
    ]
    return f"[{','.join(entries)}]"


def _input_fields(
    items: Any, datasets: _Datasets, pairs: dict[str, set[tuple[str, str]]] | None, sink_column: str
) -> str:
    """The JSON texts of the well-formed input fields (field, name, namespace, transformations as sent, with the
    qualifiedName and typeName of the dataset they map to, keys sorted), without duplicates, sorted by dataset, field,
    then everything else, joined; their direct dependencies are added to `pairs`."""
    if items.__class__ is not list and not isinstance(items, list):
        return ""
    found: list[_InputField] = []
    known, encode = datasets.known, encode_basestring
    for item in items:
        if item.__class__ is not dict and not isinstance(item, dict):
            continue
        namespace, name, field = item.get("namespace"), item.get("name"), item.get("field")
        if namespace.__class__ is not str or name.__class__ is not str or field.__class__ is not str:
            if not (isinstance(namespace, str) and isinstance(name, str) and isinstance(field, str)):
                continue
        qualified_name, type_name, middle, end = known.get((namespace, name)) or datasets.add(namespace, name)
        if middle is None:  # a dataset `skip` names
            continue
        text, sort_key, direct = _transformations(item.get("transformations"))
        if direct and pairs is not None:
            # Why the type errors are ignored: `middle` is set, so is every piece (`_Datasets.add`), which mypy
            # cannot narrow from one element of the tuple; checking each would cost the hot loop
            if qualified_name in pairs:
                pairs[qualified_name].add((field, sink_column))
            else:
                pairs[qualified_name] = {(field, sink_column)}  # type: ignore[index]
        found.append(
            (
                qualified_name,
                field,
                type_name,
                namespace,
                name,
                sort_key,  # type: ignore[arg-type]
                f'{{"field":{encode(field)}{middle}{text}{end}',
            )
        )
    if len(found) < 2:
        return found[0][6] if found else ""
    if len(found) == 2:
        first, second = found
        if first == second:
            return first[6]
        return f"{first[6]},{second[6]}" if first < second else f"{second[6]},{first[6]}"
    return ",".join([entry[6] for entry in sorted(set(found))])


_NONE = _Transformations("[]", "[]", True)
_NOTHING_SKIPPED: frozenset[tuple[str, str]] = frozenset()
_by_json: dict[bytes, _Transformations] = {}  # by orjson's text of the list as sent
_by_repr: dict[str, _Transformations] = {}  # lists whose orjson text is not a key (see `_transformations`)


def _transformations(value: Any) -> _Transformations:
    """The transformations with sorted keys, in a stable order, cached. A list is known by orjson's text of it (one C
    call; it tells True from 1 and 0 from 0.0, so equal keys mean equal lists), else by its `repr`: when orjson
    refuses it (a lone surrogate, an integer past 64 bits) or its text holds `null`, which orjson also writes for
    NaN and ±Infinity."""
    if not value or not isinstance(value, list):
        return _NONE
    try:
        key = _dumps(value)
    except JSONEncodeError:
        key = b"null"
    known = _by_json.get(key)  # never a text with null: see below
    if known is not None:
        return known
    if b"null" not in key:
        return _normalised(value, key, _by_json)
    sent = repr(value)
    return _by_repr.get(sent) or _normalised(value, sent, _by_repr)


def _normalised(value: list[Any], key: Any, cache: dict[Any, _Transformations]) -> _Transformations:
    normalised = [t if len(t) < 2 else dict(sorted(t.items())) for t in value if isinstance(t, dict)]
    if len(normalised) > 1:
        normalised.sort(key=repr)
    known = _Transformations(
        json.dumps(normalised, separators=(",", ":"), ensure_ascii=False), repr(normalised), _is_direct(normalised)
    )
    if len(known.text) <= _CACHED_CHARS:  # a long description is normalised every time: the cache stays small
        if len(cache) >= _CACHE_SIZE:
            cache.clear()
        cache[key] = known
    return known


def _is_direct(transformations: list[dict[str, Any]]) -> bool:
    if not transformations:
        return True
    for transformation in transformations:
        if transformation.get("type") == "DIRECT":
            return True
    return False
