"""Column lineage derived from a run's SQL: when the run has a `sql` job facet and an output has no `columnLineage`
facet, the statement is parsed (by the `ParseSql` the caller injects) and its column lineage is written in the
facet's own format, so that the rest of the builder treats it as if the producer had sent it.

Pure and deterministic: nothing is parsed when there is no `sql` facet or every output has column lineage.

- **Tables to datasets.** Each table the statement names is matched to the run's datasets (inputs for what it
  reads, outputs for what it writes): first by the names of their `symlinks` table identifiers, then by dataset
  names, comparing the statement's parts (`t`, `db.t`, `cat.db.t`, case-insensitively) with the end of the dataset's
  dotted name. A table that matches no dataset, or several, is left out: nothing is invented.
- **Columns.** Every output column gets an edge from each input column its value is computed from, marked DIRECT
  (openlineage-sql reports select-list dependencies only). The statement's spelling is replaced by the schema facet's
  when the dataset has one; an output column that the output's schema lacks is left out.
- **Tolerant of missing metadata, honest about guesses** (the sqllineage design): a column the parser gives to a
  table whose schema facet lacks it goes to the other input(s) whose schema has it; when several could be the
  source, each gets an edge marked ambiguous (`description` of the transformation). `*` (`SELECT *`, `t.*`, MERGE's
  `UPDATE SET *` / `INSERT *`) is expanded to the source's schema columns when known, else kept as the virtual column
  `*` (the lineage page reads `*` as every column); a star over several inputs whose schemas are unknown is marked
  ambiguous on each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from olparser.runs.model import DatasetFacts, RunSnapshot
from olparser.sql import ParsedSql, ParseSql, SqlColumn, SqlParseFailure, SqlTable

from .datasets import schema_columns

STAR = "*"
SQL_SOURCE = "sql"
DIRECT = {"type": "DIRECT"}
AMBIGUOUS = {
    "type": "DIRECT",
    "description": "ambiguous: the statement does not say which table this column comes "
    "from; each candidate has an edge",
}
DatasetKey = tuple[str, str]


@dataclass(frozen=True)
class DerivedColumns:
    """`facets`: output (namespace, name) -> a `columnLineage` facet; `note`: why there are none (a failure)."""

    facets: Mapping[DatasetKey, dict[str, Any]]
    note: str | None = None


def has_column_lineage(facet: Any) -> bool:
    """True when a `columnLineage` facet says something (a `fields` map with at least one output column)."""
    return isinstance(facet, dict) and isinstance(facet.get("fields"), dict) and bool(facet["fields"])


def sql_dialect(sql_facet: Mapping[str, Any], producer: str) -> str:
    """The facet's `dialect` when it names one; Spark SQL for openlineage-spark; else the generic dialect."""
    dialect = sql_facet.get("dialect")
    if isinstance(dialect, str) and dialect.strip():
        return dialect.strip().lower()
    return "spark" if "/integration/spark" in producer or "spark" in producer.lower() else "generic"


def derive_column_lineage(run: RunSnapshot, parse_sql: ParseSql) -> DerivedColumns | None:
    """Column lineage facets for the outputs without one, from the run's `sql` job facet; None when there is nothing
    to derive (no query, or every output has column lineage)."""
    sql_facet = run.job_facets.get("sql")
    query = sql_facet.get("query") if isinstance(sql_facet, dict) else None
    if not isinstance(query, str) or not query.strip():
        return None
    targets = {_key(o): o for o in run.outputs if not has_column_lineage(o.facets.get("columnLineage"))}
    if not targets:
        return None
    # Why the type error is ignored: a run with a SQL facet has its producer
    parsed = parse_sql(query, sql_dialect(sql_facet, run.producer))  # type: ignore[arg-type]
    if isinstance(parsed, SqlParseFailure):
        return DerivedColumns({}, f"column lineage from SQL: {parsed.reason}")
    return DerivedColumns(_Derivation(run, parsed, targets).facets())


def _key(facts: DatasetFacts) -> DatasetKey:
    return facts.namespace, facts.name


def _parts(name: str) -> tuple[str, ...]:
    return tuple(p.strip().strip("`").lower() for p in name.split("."))


def _table_names(facts: DatasetFacts) -> list[tuple[str, ...]]:
    symlinks = facts.facets.get("symlinks")
    identifiers = symlinks.get("identifiers") if isinstance(symlinks, dict) else None
    return (
        [
            _parts(i["name"])
            for i in identifiers
            if isinstance(i, dict) and isinstance(i.get("name"), str) and i.get("type", "TABLE") == "TABLE"
        ]
        if isinstance(identifiers, list)
        else []
    )


def match_table(table: SqlTable, datasets: Iterable[DatasetFacts]) -> DatasetFacts | None:
    """The one dataset the table names: by symlink table names first, then by dataset names; None when none or
    several match."""
    wanted = tuple(p.lower() for p in table.parts)
    candidates = list(datasets)
    for names_of in (_table_names, lambda facts: [_parts(facts.name)]):
        found = {
            _key(d): d
            for d in candidates
            if any(len(n) >= len(wanted) and n[-len(wanted) :] == wanted for n in names_of(d))
        }
        if len(found) == 1:
            return next(iter(found.values()))
        if found:
            return None
    return None


class _Derivation:
    """One statement against one run: the matching of its tables and the edges of each target output."""

    def __init__(self, run: RunSnapshot, parsed: ParsedSql, targets: dict[DatasetKey, DatasetFacts]) -> None:
        self.parsed = parsed
        self.targets = targets
        self.run_inputs, self.run_outputs = run.inputs, run.outputs
        self.inputs: dict[SqlTable, DatasetFacts] = {}
        for table in parsed.in_tables:
            found = match_table(table, run.inputs)
            if found is not None:
                self.inputs[table] = found
        self.sources = {_key(d): d for d in self.inputs.values()}
        self.outputs = {t: d for t in parsed.out_tables if (d := match_table(t, run.outputs)) is not None}
        self.schemas = {
            _key(d): {c.name.lower(): c.name for c in schema_columns(d.facets)} for d in (*run.inputs, *run.outputs)
        }
        # output key -> output column -> (input key, input column) -> ambiguous
        self.edges: dict[DatasetKey, dict[str, dict[tuple[DatasetKey, str], bool]]] = {}

    def facets(self) -> dict[DatasetKey, dict[str, Any]]:
        for item in self.parsed.columns:
            target_table = item.target.table or (
                self.parsed.out_tables[0] if len(self.parsed.out_tables) == 1 else None
            )
            output = (
                self.outputs.get(target_table) or match_table(target_table, self.run_outputs) if target_table else None
            )
            if output is None or _key(output) not in self.targets:
                continue
            column = self._column(_key(output), item.target.name)
            if column is None:
                continue
            for source in item.sources:
                for dataset_key, name, ambiguous in self._sources_of(source):
                    self._add(_key(output), column, dataset_key, name, ambiguous)
        self._add_stars()
        return {
            key: {
                "fields": {
                    column: {
                        "inputFields": [
                            {
                                "namespace": source[0],
                                "name": source[1],
                                "field": field,
                                "transformations": [AMBIGUOUS if ambiguous else DIRECT],
                            }
                            for (source, field), ambiguous in sorted(sources.items())
                        ]
                    }
                    for column, sources in sorted(columns.items())
                }
            }
            for key, columns in sorted(self.edges.items())
            if columns
        }

    def _column(self, key: DatasetKey, name: str) -> str | None:
        """The column's spelling in the dataset's schema; the name itself when the schema is unknown; None when the
        schema is known and lacks it."""
        schema = self.schemas.get(key) or {}
        if not schema or name == STAR:
            return name
        return schema.get(name.lower())

    def _add(self, output: DatasetKey, column: str, source: DatasetKey, field: str, ambiguous: bool) -> None:
        known = self.edges.setdefault(output, {}).setdefault(column, {})
        known[(source, field)] = known.get((source, field), True) and ambiguous

    def _sources_of(self, source: SqlColumn) -> list[tuple[DatasetKey, str, bool]]:
        """(input key, column, ambiguous) for one source column the parser reported."""
        candidates = self._candidates(source.table)
        if len(candidates) == 1:
            said = candidates[0]
            column = self._column(said, source.name)
            if column is not None:
                return [(said, column, False)]
            others = [key for key in sorted(self.sources) if key != said and self._has(key, source.name)]
            if not others:
                return [(said, source.name, False)]  # nobody has it: the parser's word stands
            candidates = others
        plausible = [key for key in candidates if self._column(key, source.name) is not None]
        return [(key, self._column(key, source.name) or source.name, len(plausible) > 1) for key in plausible]

    def _has(self, key: DatasetKey, column: str) -> bool:
        return column.lower() in (self.schemas.get(key) or {})

    def _candidates(self, table: SqlTable | None, seen: frozenset[str] = frozenset()) -> list[DatasetKey]:
        """The inputs a column's table can be: the input it names; the inputs a common table expression of that name
        reads; every input when the parser could not tell (None)."""
        if table is None:
            return sorted(self.sources)
        found = self._input_for(table)
        if found is not None:
            return [_key(found)]
        name = table.name.lower()
        tables = dict(self.parsed.ctes).get(name) if len(table.parts) == 1 and name not in seen else None
        keys: dict[DatasetKey, None] = {}
        for inner in tables or ():
            keys.update(dict.fromkeys(self._candidates(inner, seen | {name})))
        return list(keys)

    def _add_stars(self) -> None:
        outputs = {_key(d) for d in self.outputs.values()}
        if not self.parsed.stars or len(outputs) != 1 or next(iter(outputs)) not in self.targets:
            return
        output = next(iter(outputs))
        for star in self.parsed.stars:
            sources = self._star_sources(star.qualifier)
            shared = len(sources) > 1
            for key in sources:
                schema = self.schemas.get(key) or {}
                if not schema:
                    self._add(output, STAR, key, STAR, shared)
                    continue
                for lower, name in schema.items():
                    column = self._column(output, name)
                    if column is not None:
                        in_others = shared and any(
                            lower in (self.schemas.get(k) or {lower: lower}) for k in sources if k != key
                        )
                        self._add(output, column, key, name, in_others)

    def _input_for(self, table: SqlTable) -> DatasetFacts | None:
        """The input a table of the statement is: as the parser listed it, else matched anew (another spelling)."""
        return self.inputs.get(table) or match_table(table, self.run_inputs)

    def _star_sources(self, qualifier: str | None) -> list[DatasetKey]:
        """The inputs a star copies: the one its qualifier names (an alias or a table name), else every input."""
        if qualifier is not None:
            table = dict(self.parsed.aliases).get(qualifier) or SqlTable((qualifier,))
            found = self._input_for(table)
            if found is not None and _key(found) in self.sources:
                return [_key(found)]
        return sorted(self.sources)
