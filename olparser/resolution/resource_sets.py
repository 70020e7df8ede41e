"""Purview's resource sets: which asset the storage scanners register for a file, and for a folder Spark wrote.

One implementation for both sides of issue 19: the connector predicts the resource-set qualifiedNames of a folder a
Spark job wrote (`resource_set_names`), and `ol2purview catalog scan` groups the files of a local folder as the
scanner would (`group_files`). Both go through `scanned_name`, so they cannot disagree. The account's rule
configuration is parsed in `olparser/resolution/resource_set_rules.py` (`ResourceSetRules`); this module is the path
logic that applies it. Pure: no I/O beyond reading the shipped default configuration once.

What Purview documents, and what this module does with it:

- Microsoft Learn, "Understanding resource sets" (data-map-resource-sets): every file is compared with patterns
  applied to each path segment (directory names and the file name); a file whose path a pattern generalises belongs
  to the resource set named by the generalised path (`machinesets/23/foo.parquet` -> `machinesets/{N}/foo.parquet`,
  `weblogs/en_au/23.json` -> `weblogs/{LOC}/{N}.json`, `data1.csv` -> `data{N}.csv`). Word, Excel and PDF files are
  never grouped. Complex patterns: `SparkPath` (`{SparkPartitions}`, Spark's part files) and
  `Date(yyyy/mm/dd)InPath` (`{Year}/{Month}/{Day}` across three folders).
- The account API `resourceSetRuleConfigs/defaultResourceSetRuleConfig` (api-version 2019-11-01-preview) holds the
  regexes (`regexReplacers`: .NET regexes with `options`, `replaceWith` with `$n` group references, `condition`,
  `doNotReplaceRegex`, `disableRecursiveReplacerApplication`), `complexReplacers`, `rejectedPatterns`,
  `acceptedPatterns`, `scopedRules` (pattern rules: `{name:type}` groups generalise, `{{name:type}}` keep the value,
  `isResourceSet: false` keeps single files) and `enableDefaultPatterns`. `ResourceSetRules.default()` is the
  configuration a current account answers (config version 5: dates as `{Year}`/`{Month}`/`{Day}`, `=` a delimiter),
  kept in `default_resource_set_rule_config.json` beside this module, with Learn's OfficeDocuments rejection.
- Spark output folders: `{folder}/{SparkPartitions}`; Hive-style partition folders
  `{folder}/Year={Year}/Month={Month}/Day={Day}/{SparkPartitions}`. Directory segments above the Spark folder are
  generalised like any other (`.../events/2024/part-0.parquet` -> `.../events/{N}/{SparkPartitions}`).

Choices where Purview documents nothing (kept here, in one place, so that the connector and the scanner agree):

- A partition folder `k=v` becomes `k={k}`, whatever the value (`region=eu` -> `region={region}`), which is exactly
  the documented `Year={Year}` for date keys (`_partition_placeholder`).
- Spark and Delta bookkeeping (`_delta_log/`, `_change_data/`, `_spark_metadata/`, `_SUCCESS`, `_committed_*`,
  `_started_*`, `.crc` files, Parquet `_metadata`) belongs to the resource set of its table folder and is not counted
  in `partitionCount`; a table folder with bookkeeping and no data file yet is `{folder}/{SparkPartitions}` with
  `partitionCount` 0 (`_SPARK_BOOKKEEPING`).
- `partitionCount` counts the data files of a resource set.
- A part file is `part-` (optionally `r-`/`m-`) and five or more digits (`part-00000-<uuid>-c000.snappy.parquet`).
- `enableDefaultPatterns: false` turns off every replacer (built-in or not): only scoped pattern rules group.
- Normalisation rules and unknown complex replacers are read and ignored; a pattern rule's `string` matches within
  one folder (`[^/]+`).
- Container, filesystem, share and bucket names are never generalised; only the path inside them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Iterable, Sequence

import regex

from olparser.resolution.resource_set_rules import (
    APPLY_TO_FILE_NAME,
    APPLY_TO_FILE_NAME_OR_NON_VERSION,
    APPLY_TO_NON_FILE_NAME,
    MATCH_TIMEOUT_SECONDS,
    RegexReplacer,
)
from olparser.resolution.resource_set_rules import ResourceSetRules as ResourceSetRules
from olparser.resolution.resource_set_rules import default_account_config as default_account_config
from olparser.resolution.resource_set_rules import safely as _safely

SPARK_PARTITIONS = "{SparkPartitions}"

# path type -> the type of the resource sets the same scanner registers
RESOURCE_SET_TYPES: dict[str, str] = {
    "azure_datalake_gen2_path": "azure_datalake_gen2_resource_set",
    "azure_blob_path": "azure_blob_resource_set",
    "azure_datalake_gen1_path": "azure_datalake_gen1_resource_set",
    "azure_file": "azure_file_resource_set",
    "aws_s3_v2_object": "aws_s3_v2_resource_set",
}
# the container-level asset of each path type (what `catalog scan` registers above the files)
CONTAINER_TYPES: dict[str, str] = {
    "azure_datalake_gen2_path": "azure_datalake_gen2_filesystem",
    "azure_blob_path": "azure_blob_container",
    "azure_file": "azure_file_share",
    "aws_s3_v2_object": "aws_s3_v2_bucket",
}

# Spark's files (the one place that says what Spark and Delta write; see the module docstring)
_PART_FILE = regex.compile(r"part-(?:[rm]-)?\d{5,}.*", regex.V1)
_BOOKKEEPING_FOLDERS = frozenset({"_delta_log", "_change_data", "_spark_metadata"})
_BOOKKEEPING_FILES = regex.compile(
    r"_SUCCESS|_committed_.*|_started_.*|_metadata|_common_metadata|\..*\.crc|deletion_vector_.*\.bin", regex.V1
)
_PARTITION_SEGMENT = regex.compile(r"([^=/]+)=([^/]*)", regex.V1)
_PLACEHOLDER = regex.compile(r"\{[^{}/]*\}", regex.V1)
# the file the connector imagines in a folder a Spark job wrote (a real Spark 3 part file name)
SPARK_PROBE_FILE = "part-00000-00000000-0000-0000-0000-000000000000-c000.snappy.parquet"

_YEAR = regex.compile(r"(?:19|20)\d\d", regex.V1)
_MONTH = regex.compile(r"0?[1-9]|1[0-2]", regex.V1)
_DAY = regex.compile(r"0?[1-9]|[12]\d|3[01]", regex.V1)


# --- where a qualifiedName's path starts -----------------------------------------------------------------------------
_STORAGE_HOST = regex.compile(r"https://[^/]+\.(dfs|blob|file)\.core\.[^/]+", regex.V1 | regex.IGNORECASE)
_HOST_PATH_TYPES = {"dfs": "azure_datalake_gen2_path", "blob": "azure_blob_path", "file": "azure_file"}


@dataclass(frozen=True)
class StoragePath:
    """A storage qualifiedName split where Purview's patterns start: `root` (scheme, host and container) and the
    path's segments below it."""

    root: str
    segments: tuple[str, ...]
    path_type: str

    @property
    def qualified_name(self) -> str:
        return "/".join((self.root, *self.segments))

    @property
    def resource_set_type(self) -> str:
        return RESOURCE_SET_TYPES[self.path_type]


def split_storage_path(qualified_name: str) -> StoragePath | None:
    """`https://{account}.dfs|blob|file.core.{cloud}/{container}/{path}`, `adl://{account}.azuredatalakestore.net/
    {path}`, `s3://{bucket}/{path}`; None for anything else or a path with no segment below the container. Empty
    segments (`//`) and trailing slashes are dropped, as Purview's normalisation removes double slashes."""
    if not isinstance(qualified_name, str):
        return None
    host = _STORAGE_HOST.match(qualified_name)
    if host:
        parts = [p for p in qualified_name[host.end() :].split("/") if p]
        if len(parts) < 2:
            return None
        return StoragePath(f"{host.group(0)}/{parts[0]}", tuple(parts[1:]), _HOST_PATH_TYPES[host.group(1).lower()])
    for scheme, path_type in (("adl://", "azure_datalake_gen1_path"), ("s3://", "aws_s3_v2_object")):
        if qualified_name.lower().startswith(scheme):
            parts = [p for p in qualified_name[len(scheme) :].split("/") if p]
            if len(parts) < 2:
                return None
            return StoragePath(f"{qualified_name[: len(scheme)]}{parts[0]}", tuple(parts[1:]), path_type)
    return None


# --- applying the rules to one file ------------------------------------------------------------------------------
def _overlaps(start: int, end: int, spans: Iterable[tuple[int, int]]) -> bool:
    return any(start < s_end and s_start < end for s_start, s_end in spans)


def _substitute(segment: str, replacer: RegexReplacer, protected: list[tuple[int, int]]) -> str:
    out, position = [], 0
    matches = _safely(lambda: list(replacer.compiled.finditer(segment, timeout=MATCH_TIMEOUT_SECONDS))) or []
    for match in matches:
        start, end = match.span()
        if start == end or _overlaps(start, end, protected):
            continue
        out.append(segment[position:start])
        out.extend(part if isinstance(part, str) else (match.group(part) or "") for part in replacer.substitution)
        position = end
    out.append(segment[position:])
    return "".join(out)


MEMO_SIZE = 50_000


def _generalize_segment(segment: str, is_file: bool, rules: ResourceSetRules) -> str:
    key = (segment, is_file)
    known = rules.memo.get(key)
    if known is None:
        if len(rules.memo) >= MEMO_SIZE:
            rules.memo.clear()
        known = rules.memo[key] = _apply_replacers(segment, is_file, rules)
    return known


def _all_matches(pattern: regex.Pattern[str], text: str) -> list[regex.Match[str]]:
    return list(pattern.finditer(text, timeout=MATCH_TIMEOUT_SECONDS))


def _apply_replacers(segment: str, is_file: bool, rules: ResourceSetRules) -> str:
    for replacer in rules.replacers:
        if (replacer.condition == APPLY_TO_FILE_NAME and not is_file) or (
            replacer.condition == APPLY_TO_NON_FILE_NAME and is_file
        ):
            continue
        keep = []
        if replacer.keep_compiled is not None:
            found = _safely(partial(_all_matches, replacer.keep_compiled, segment))
            keep = [m.span() for m in found or ()]
            if replacer.condition == APPLY_TO_FILE_NAME_OR_NON_VERSION and keep and not is_file:
                continue  # a folder named like a version string keeps its name
        protected = keep + [m.span() for m in _PLACEHOLDER.finditer(segment)]
        changed = _substitute(segment, replacer, protected)
        if changed != segment:
            segment = changed
            if replacer.final:
                break
    return segment


def _generalize_folders(folders: Sequence[str], rules: ResourceSetRules) -> list[str]:
    """Directory segments as the scanner names them: `yyyy/mm/dd` runs first (when on), then the regex replacers."""
    out = list(folders)
    done = [False] * len(out)
    if rules.dates_in_path:
        i = 0
        while i + 2 < len(out):
            if _YEAR.fullmatch(out[i]) and _MONTH.fullmatch(out[i + 1]) and _DAY.fullmatch(out[i + 2]):
                out[i : i + 3], done[i : i + 3] = ["{Year}", "{Month}", "{Day}"], [True] * 3
                i += 3
            else:
                i += 1
    return [segment if done[i] else _generalize_segment(segment, False, rules) for i, segment in enumerate(out)]


def _partition_placeholder(key: str) -> str:
    """The one choice for Hive-style partition folders: `k=v` -> `k={k}` (documented for Year/Month/Day)."""
    return f"{key}={{{key}}}"


@dataclass(frozen=True)
class _SparkFile:
    table: tuple[str, ...]  # the segments of the table folder below the root
    partitions: tuple[str, ...]  # partition keys, outermost first
    is_data: bool


def _spark_file(segments: Sequence[str]) -> _SparkFile | None:
    """Whether a path is something Spark or Delta wrote, and the table folder and partition keys it belongs to."""
    name, folders = segments[-1], list(segments[:-1])
    for index, folder in enumerate(folders):
        if folder in _BOOKKEEPING_FOLDERS:
            return _SparkFile(_strip_partitions(folders[:index])[0], (), False)
    is_data = _PART_FILE.fullmatch(name) is not None
    if not is_data and _BOOKKEEPING_FILES.fullmatch(name) is None:
        return None
    table, keys = _strip_partitions(folders)
    return _SparkFile(table, keys if is_data else (), is_data)


def _strip_partitions(folders: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    end = len(folders)
    while end > 0 and _PARTITION_SEGMENT.fullmatch(folders[end - 1]):
        end -= 1
    keys = tuple(_PARTITION_SEGMENT.fullmatch(f).group(1) for f in folders[end:])  # type: ignore[union-attr]
    return tuple(folders[:end]), keys


def _spark_resource_set(root: str, spark: _SparkFile, rules: ResourceSetRules) -> str:
    segments = _generalize_folders(spark.table, rules)
    segments += [_partition_placeholder(key) for key in spark.partitions]
    return "/".join((root, *segments, SPARK_PARTITIONS))


@dataclass(frozen=True)
class Placement:
    """Where the scanner puts one file: the asset's qualifiedName and whether it is a resource set; for Spark and
    Delta bookkeeping (not a partition), `table` is the table's unpartitioned resource set."""

    qualified_name: str
    is_resource_set: bool
    table: str | None = None


def scanned_name(file_qualified_name: str, rules: ResourceSetRules) -> Placement:
    """What the scanner registers for one file: its resource set, or the file itself. Scoped pattern rules first
    (most specific scope first, rules in order), then Spark's files, then the path and regex patterns."""
    path = split_storage_path(file_qualified_name)
    if path is None:
        return Placement(file_qualified_name, False)
    qualified_name = path.qualified_name
    if any(f.matches(qualified_name) for f in rules.rejected) or (
        rules.accepted and not any(f.matches(qualified_name) for f in rules.accepted)
    ):
        return Placement(qualified_name, False)
    for scope in rules.scoped:
        if qualified_name.startswith(scope.binding_url + "/"):
            relative = qualified_name[len(scope.binding_url) + 1 :]
            for rule in scope.rules:
                named = rule.apply(relative)
                if named is not None:
                    return Placement(
                        f"{scope.binding_url}/{named}" if rule.is_resource_set else qualified_name, rule.is_resource_set
                    )
    if not rules.default_patterns:
        return Placement(qualified_name, False)
    spark = _spark_file(path.segments) if rules.spark_paths else None
    if spark is not None:
        named = _spark_resource_set(path.root, spark, rules)
        if spark.is_data:
            return Placement(named, True)
        table = _spark_resource_set(path.root, _SparkFile(spark.table, (), False), rules)
        return Placement(table, True, table=table)
    segments = _generalize_folders(path.segments[:-1], rules)
    segments.append(_generalize_segment(path.segments[-1], True, rules))
    named = "/".join((path.root, *segments))
    return Placement(named, named != qualified_name)


# --- what the connector asks --------------------------------------------------------------------------------------
def resource_set_names(path_qualified_name: str, rules: ResourceSetRules, *, folder: bool = True) -> tuple[str, ...]:
    """The resource-set qualifiedNames the scanner may have registered for the data at this path, most specific
    first, no duplicates. A folder (a Spark or Delta output) is named as the scanner names the part files in it:
    `{folder}/{SparkPartitions}`, partition segments `k=v` -> `k={k}`, other segments generalised by the rules
    (`{N}`, `{GUID}`, `{Year}`, ...); the same folder with only its partition segments generalised comes first when
    it differs (an account whose replacers do not touch it). A file: the resource set its name falls into, if any.
    Never raises on odd input (returns ())."""
    try:
        path = split_storage_path(path_qualified_name)
        if path is None:
            return ()
        names: list[str] = []
        if folder:
            table, keys = _strip_partitions(path.segments)
            literal = [*table, *(_partition_placeholder(k) for k in keys)]
            names.append("/".join((path.root, *literal, SPARK_PARTITIONS)))
            placement = scanned_name(f"{path.qualified_name}/{SPARK_PROBE_FILE}", rules)
        else:
            placement = scanned_name(path.qualified_name, rules)
        if placement.is_resource_set:
            names.append(placement.qualified_name)
        elif folder:
            names.clear()  # the account's rules keep Spark's files apart (a pattern rule, rejection, no defaults)
        return tuple(dict.fromkeys(names))
    except Exception:  # noqa: BLE001 - the contract: odd input gives no candidates, never an error
        return ()


_SPARK_SET = regex.compile(r"(?P<folder>.+?)(?:/[^/=]+=\{[^{}/]+\})*/\{SparkPartitions\}", regex.V1)


def spark_folder_of(resource_set_qualified_name: str) -> str | None:
    """The folder of a Spark resource set: `{folder}/k1={k1}/…/{SparkPartitions}` -> `{folder}`; None otherwise."""
    if not isinstance(resource_set_qualified_name, str):
        return None
    match = _SPARK_SET.fullmatch(resource_set_qualified_name)
    return match.group("folder") if match else None


def matches_folder(resource_set_qualified_name: str, path_qualified_name: str, rules: ResourceSetRules) -> bool:
    """Whether a resource set found by a search (e.g. `startswith` the folder) is the scanned form of this folder,
    partitioned by keys the connector could not know (`.../sales` vs `.../sales/Year={Year}/{SparkPartitions}`)."""
    folder = spark_folder_of(resource_set_qualified_name)
    forms = {spark_folder_of(name) for name in resource_set_names(path_qualified_name, rules)}
    return folder is not None and folder in forms


# --- what the scanner registers ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScannedAsset:
    """A resource set, or a single file no rule groups, as the scanner registers it."""

    qualified_name: str
    type_name: str
    name: str
    is_resource_set: bool
    partition_count: int
    files: tuple[str, ...]  # the files it stands for, sorted (data and bookkeeping)


def display_name(qualified_name: str) -> str:
    """The name Purview shows: a single file's name; for a resource set the last segment with text other than
    placeholders, partition folders and delimiters, its extension dropped and `-`/`_` as spaces
    (Learn: `name-of-spark-output/{SparkPartitions}` -> "name of spark output", `data{N}.csv` -> "data")."""
    segments = [s for s in qualified_name.split("/") if s]
    if "{" not in qualified_name:
        return segments[-1] if segments else qualified_name
    for index in range(len(segments) - 1, -1, -1):
        segment = segments[index]
        if _PARTITION_SEGMENT.fullmatch(segment) and _PLACEHOLDER.search(segment):
            continue
        text = _PLACEHOLDER.sub("", segment)
        if index == len(segments) - 1 and "." in text:
            text = text[: text.rindex(".")]
        words = regex.sub(r"[-_.@= ]+", " ", text).strip()
        if words:
            return words
    return segments[-1] if segments else qualified_name


def group_files(paths: Iterable[str], rules: ResourceSetRules) -> list[ScannedAsset]:
    """What the scanner registers for these file qualifiedNames: resource sets (with their partition count) and the
    single files no rule groups, sorted by qualifiedName. Spark/Delta output folders become one
    `{folder}/{SparkPartitions}` resource set, partitioned ones `{folder}/k={k}/.../{SparkPartitions}`; their
    bookkeeping joins the table's resource sets. Paths that are not storage qualifiedNames are left out."""
    members: dict[str, list[str]] = {}
    counts: dict[str, int] = {}
    is_set: dict[str, bool] = {}
    bookkeeping: dict[str, list[str]] = {}  # the table's unpartitioned resource set -> its bookkeeping files
    data_tables: dict[str, set[str]] = {}  # the table's unpartitioned resource set -> data resource sets under it
    types: dict[str, str] = {}
    for file in sorted(set(paths)):
        path = split_storage_path(file)
        if path is None:
            continue
        placement = scanned_name(file, rules)
        types[placement.qualified_name] = path.resource_set_type if placement.is_resource_set else path.path_type
        if placement.table is not None:
            bookkeeping.setdefault(placement.table, []).append(path.qualified_name)
            continue
        members.setdefault(placement.qualified_name, []).append(path.qualified_name)
        counts[placement.qualified_name] = counts.get(placement.qualified_name, 0) + 1
        is_set[placement.qualified_name] = placement.is_resource_set
        folder = spark_folder_of(placement.qualified_name) if placement.is_resource_set else None
        if folder is not None:
            data_tables.setdefault(f"{folder}/{SPARK_PARTITIONS}", set()).add(placement.qualified_name)
    for table, files in bookkeeping.items():
        owner = min(data_tables.get(table, ()), default=table)  # one owner: every file is placed once
        members.setdefault(owner, []).extend(files)
        counts.setdefault(owner, 0)
        is_set[owner] = True
    return [
        ScannedAsset(
            qualified_name=qn,
            type_name=types[qn],
            name=display_name(qn),
            is_resource_set=is_set[qn],
            partition_count=counts[qn],
            files=tuple(sorted(set(members[qn]))),
        )
        for qn in sorted(members)
    ]
