"""qn-tester: try, explain and lint OpenLineage → Purview qualified-name mappings.

  qn-tester                                   prompt for nameSpace and name until end of input
  qn-tester --namespace NS --name NAME        one mapping as a JSON line
  qn-tester --namespace NS --name NAME --explain [--full] [--catalog [URL]] [--metastore ID]
  qn-tester --batch FILE|-                    JSON lines {"namespace", "name"} or a JSON file with a "cases" list
  qn-tester --event FILE                      every input and output of an OpenLineage event
  qn-tester lint [--config PATH] [--catalog [URL]]   problems in a mapping config (and types the catalog lacks)
  qn-tester coverage [--config PATH] [--json] [--guide PAGE]   the naming spec's forms -> qualifiedName, type,
                                              status, with counts (--guide: write the table into that page)

Every answer is what the connector writes for the same settings: the builder's own naming
(`olparser.lineage.build.naming_resolver`: the rules, --mounts, --workspace-url, the metastore of DATABRICKS_METASTORE_IDS
or --metastore) and, with --catalog [URL], the scanned asset the resolver links it to. A dataset no rule names is the
connector's placeholder (`openlineage_dataset`), with the reason under "error".
Exit codes: 0 every input named (and at the end of prompts on a terminal); 3 some input matched no rule; 2 usage or
config error; lint: 1 problems found.
The rules are --config PATH, else the app setting OlToPurviewMappings (inline JSON), else OL_TO_PURVIEW_MAPPINGS_PATH,
else the one rule file (config/OlToPurviewMappings.json in a checkout, its packaged copy in an installed wheel), as
every command reads them; the first line on stderr says which.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable, Iterator, TextIO

from olparser.adapters.rules_file import rules_source
from olparser.lineage import LineageOptions
from olparser.lineage.build import naming_resolver
from olparser.lineage.datasets import UNITY_CATALOG_TYPE, DatasetResolver
from olparser.naming import ConfigError, MappingEngine, MountPoint, mounts_from_facet
from olparser.naming.engine import Explanation
from olparser.naming.lint import lint_config
from olparser.naming.mounts import DBFS_NAMESPACES
from olparser.naming.rules import parse_json, read_path, unwrap
from olparser.resolution import unity_catalog
from olparser.runs.model import DatasetFacts
from olparser.settings import Settings

from .catalog_options import add_target_arguments

EXIT_OK, EXIT_LINT_FINDINGS, EXIT_USAGE, EXIT_UNMATCHED = 0, 1, 2, 3
CLOSEST_SHOWN = 5  # rules listed by the --explain summary
EMPTY_NAMESPACE = "the namespace is empty: type one (e.g. abfss://raw@lake.dfs.core.windows.net), or Ctrl-D to quit"


class UsageError(Exception):
    """Bad arguments or unreadable input files: exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qn-tester",
        description="Map OpenLineage (namespace, name) pairs to Purview qualified names with the mapping rules.",
    )
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="mapping config (default: the app setting, else config/OlToPurviewMappings.json as `serve` reads it)",
    )
    parser.add_argument("--namespace", metavar="NS", help="OpenLineage dataset namespace")
    parser.add_argument("--name", metavar="NAME", help="OpenLineage dataset name")
    parser.add_argument("--mounts", metavar="FILE", help="Databricks mount points: a JSON list of {mountPoint, source}")
    parser.add_argument("--workspace-url", metavar="HOST", help="Databricks workspace host, for Hive tables")
    parser.add_argument(
        "--explain",
        action="store_true",
        help="show the tokens, the winner and the closest rules (with --full: every rule)",
    )
    parser.add_argument("--full", action="store_true", help="with --explain: every rule and every condition")
    parser.add_argument(
        "--catalog",
        dest="explain_catalog",
        nargs="?",
        const="",
        metavar="URL",
        help="link each dataset to the scanned asset this catalog holds, as the connector does (with --explain: "
        "check every candidate); an Atlas v2 URL, without URL: PURVIEW_ACCOUNT_NAME or ATLAS_ENDPOINT, else the "
        "running `ol2purview serve`'s",
    )
    parser.add_argument(
        "--metastore",
        metavar="ID",
        help="the Unity Catalog metastore id of the workspace (as "
        "DATABRICKS_METASTORE_IDS gives it), for Unity Catalog names "
        "(unity-catalog, unitycatalog://, databricks://)",
    )
    parser.add_argument(
        "--batch", metavar="FILE", help="JSON lines of {namespace, name}, or a JSON file with 'cases' (- for stdin)"
    )
    parser.add_argument("--event", metavar="FILE", help="an OpenLineage event: map all its inputs and outputs")
    add_target_arguments(parser, catalog=True)  # --atlas-url URL is --catalog URL; --data: whose serve's catalog
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    lint = sub.add_parser("lint", help="check a mapping config", description="Check a mapping config for problems.")
    lint.add_argument("--config", dest="lint_config", metavar="PATH", help="mapping config to check")
    lint.add_argument(
        "--catalog",
        nargs="?",
        const="",
        metavar="URL",
        help="also check every rule's purviewDataType against the entity types of this catalog (an "
        "Atlas v2 URL such as http://127.0.0.1:21000/api/atlas/v2); without URL: "
        "PURVIEW_ACCOUNT_NAME or ATLAS_ENDPOINT, else the running `ol2purview serve`'s catalog",
    )
    lint.add_argument(
        "--placement",
        metavar="PATH",
        help="also check a collection placement rules file (default: PLACEMENT_RULES_PATH, when set)",
    )
    add_target_arguments(lint, catalog=True)  # --atlas-url URL is --catalog URL; --data: whose serve's catalog
    coverage = sub.add_parser(
        "coverage",
        help="the naming spec's table: each form's qualifiedName, type, status",
        description="Each dataset form of the OpenLineage naming spec and of today's producers "
        "-> qualifiedName, type, and whether it is a scanner's form, found by "
        "search, or a documented other store; with counts.",
    )
    coverage.add_argument("--config", dest="coverage_config", metavar="PATH", help="mapping config to use")
    coverage.add_argument("--json", action="store_true", help="one JSON line per form, then one with the counts")
    coverage.add_argument(
        "--guide",
        metavar="PAGE",
        help="write the table into this page between its markers (docs/guides/producers-and-names.md)",
    )
    return parser


# --- inputs ---------------------------------------------------------------------------------------------------------


def _read_json_file(path: str, what: str) -> Any:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{what} {path} is not valid JSON: {exc.msg} (line {exc.lineno})") from None


def load_engine(config: str | None, err: TextIO | None = None) -> MappingEngine:
    """The rules: `config`, else the settings' (as every command reads them); says which on `err`."""
    settings = Settings.from_env()
    engine = MappingEngine.from_path(config) if config else MappingEngine.from_settings(settings)
    if err is not None:
        err.write(f"qn-tester: rules from {config or rules_source(settings)} ({len(engine.rules)} rules)\n")
        err.flush()
    return engine


def load_mounts(path: str | None) -> Any:
    """The mount points as the environment facet lists them (checked to hold some), or None."""
    if not path:
        return None
    listed = _read_json_file(path, "mounts file")
    if not mounts_from_facet(listed):
        raise UsageError(f"mounts file {path} holds no mount points (expected a list of {{mountPoint, source}})")
    return listed


def dataset_namer(
    engine: MappingEngine, args: argparse.Namespace, namespace: str | None = None, mount_points: Any = None
) -> DatasetResolver:
    """The connector's naming for the settings given (`naming_resolver`, the builder's): DATABRICKS_METASTORE_IDS and
    the other settings of the environment, `--mounts`, `--workspace-url`; `--metastore` is the metastore of the
    workspace, and of the host a Unity Catalog namespace names, as DATABRICKS_METASTORE_IDS would say it."""
    options = LineageOptions.from_settings(Settings.from_env())
    host = unity_catalog.unity_namespace(namespace.strip())[1] if namespace else None
    if args.metastore and host:
        given = (host.lower(), args.metastore.strip().lower())  # after the settings': the flag wins
        options = replace(options, workspace_metastores=(*options.workspace_metastores, given))
    return naming_resolver(
        engine,
        options,
        mount_points=mount_points,
        workspace_host=args.workspace_url,
        metastore=args.metastore.strip().lower() if args.metastore else None,
    )


def batch_cases(path: str) -> tuple[list[tuple[str, str]], str | None]:
    """(namespace, name) pairs and the file's workspace url, from JSON lines or a {"cases": [...]} file."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise UsageError(f"cannot read batch file {path}: {exc.strerror or exc}") from None
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        if not isinstance(whole.get("cases"), list):
            raise UsageError(f"batch file {path}: a JSON object needs a 'cases' list")
        workspace = whole.get("workspaceUrl")
        return [_case(c, f"case {i}") for i, c in enumerate(whole["cases"])], workspace if isinstance(
            workspace, str
        ) else None
    if isinstance(whole, list):
        return [_case(c, f"case {i}") for i, c in enumerate(whole)], None
    cases = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"batch file {path}, line {number}: not valid JSON ({exc.msg})") from None
        cases.append(_case(item, f"line {number}"))
    return cases, None


def _case(item: Any, where: str) -> tuple[str, str]:
    if (
        not isinstance(item, dict)
        or not isinstance(item.get("namespace"), str)
        or not isinstance(item.get("name"), str)
    ):
        raise UsageError(f"{where}: expected an object with string 'namespace' and 'name'")
    return item["namespace"], item["name"]


def event_datasets(
    path: str,
    engine: MappingEngine,
    mounts: tuple[MountPoint, ...] = (),
    workspace_url: str | None = None,
    metastore: str | None = None,
) -> list[dict[str, Any]]:
    """One line per input and output of the event, named as the connector names it (`dataset_resolver`: the rules,
    the run's mount points, workspace host and metastore; a table's `symlinks` identifier when that is what the
    catalog gets): the identity written, and the other one as `also`. `--mounts`, `--workspace-url` and `--metastore`
    override what the event says."""
    from dataclasses import replace

    from olparser.lineage import LineageOptions
    from olparser.lineage.build import dataset_resolver
    from olparser.runs.merge import is_static_event, merge_event, snapshot_from_static

    event = _read_json_file(path, "event file")
    if not isinstance(event, dict):
        raise UsageError(f"event file {path}: expected a JSON object (one OpenLineage event)")
    try:
        run = snapshot_from_static(event) if is_static_event(event) else merge_event(None, event)
    except (ValueError, TypeError, AttributeError) as exc:
        raise UsageError(f"event file {path}: not an OpenLineage event the connector reads ({exc})") from None
    resolver = dataset_resolver(run, engine, LineageOptions.from_settings(Settings.from_env()))
    overrides: dict[str, Any] = {"mounts": mounts, "workspace_url": workspace_url, "metastore_id": metastore}
    resolver = replace(resolver, **{name: value for name, value in overrides.items() if value})
    return [
        {"direction": direction, **identity_json(resolver.resolve(facts))}
        for direction, datasets in (("input", run.inputs), ("output", run.outputs))
        for facts in datasets
    ]


def identity_json(dataset: Any) -> dict[str, Any]:
    """A dataset as the catalog gets it (a placeholder `openlineage_dataset` with `error` when no rule matched),
    with the identity not chosen under `also`."""
    out: dict[str, Any] = {
        "namespace": dataset.namespace,
        "name": dataset.name,
        "QualifiedName": dataset.qualified_name,
        "PurviewType": dataset.type_name,
        "Rule": dataset.rule,
    }
    if dataset.unmatched_reason:
        out["error"] = dataset.unmatched_reason
    if dataset.alternate is not None:
        out["also"] = identity_json(dataset.alternate)
    return out


# --- outputs --------------------------------------------------------------------------------------------------------


def _emit(obj: dict[str, Any], out: TextIO) -> None:
    out.write(json.dumps(obj) + "\n")
    out.flush()


def _prompted_pairs(stdin: TextIO, out: TextIO, err: TextIO) -> Iterator[tuple[str, str]]:
    """(namespace, name) pairs typed at the prompts; end of input (Ctrl-D) at either prompt ends them at once, and an
    empty namespace is refused (it would run every rule) and asked again."""
    interactive = stdin.isatty()
    while True:
        namespace = _prompt(stdin, out, "nameSpace: ", interactive)
        if namespace is None:
            return
        if not namespace.strip():
            err.write(f"qn-tester: {EMPTY_NAMESPACE}\n")
            err.flush()
            continue
        name = _prompt(stdin, out, "name: ", interactive)
        if name is None:
            return
        yield namespace, name


def _prompt(stdin: TextIO, out: TextIO, label: str, interactive: bool) -> str | None:
    if interactive:
        out.write(label)
        out.flush()
    line = stdin.readline()
    if not line:  # end of input
        if interactive:
            out.write("\n")
            out.flush()
        return None
    return line.rstrip("\r\n")


def hints(namespace: str, name: str, mounts: tuple[MountPoint, ...], type_name: str | None = None) -> list[str]:
    """Advice for inputs that usually mean a mistake in how they were typed, not in the rules. `type_name`: the type
    the connector writes the dataset as (a Unity Catalog name whose metastore the settings give needs no hint)."""
    found = []
    if (
        not mounts
        and (name.startswith(("/mnt/", "dbfs:/mnt/", "/dbfs/mnt/")) or namespace.startswith("dbfs:/mnt"))
        and (namespace in DBFS_NAMESPACES or namespace.startswith("dbfs"))
    ):
        found.append(
            "hint: /mnt/... is a Databricks mount point: pass --mounts FILE (a JSON list of {\"mountPoint\", "
            "\"source\"}, as in the run's environment-properties facet) or --event FILE, so that it maps like "
            "the storage path it mounts"
        )
    if unity_catalog.unity_namespace(namespace.strip())[0] and type_name in (None, UNITY_CATALOG_TYPE):
        found.append(
            "hint: a Unity Catalog table is named from its metastore, not by a rule: pass --metastore ID (the "
            "metastore id DATABRICKS_METASTORE_IDS gives for the workspace), or --workspace-url HOST of a workspace "
            "DATABRICKS_METASTORE_IDS lists, or --event FILE"
        )
    if namespace.lower().startswith("jdbc:"):
        found.append(
            f"hint: OpenLineage namespaces have no 'jdbc:' prefix (Spark sends {namespace[5:]!r}, not "
            f"{namespace!r}): try --namespace {namespace[5:]!r}"
        )
    return found


def _print_hints(
    namespace: str, name: str, mounts: tuple[MountPoint, ...], err: TextIO, type_name: str | None = None
) -> None:
    for line in hints(namespace, name, mounts, type_name):
        err.write(line + "\n")
    err.flush()


def explain_summary(explanation: Explanation, engine: MappingEngine) -> str:
    """The input, its tokens, the winner and the closest rules (those the namespace did not rule out), with a count
    of the rest: a page instead of the ~200 lines `--full` prints for an input no rule matches."""
    full = explanation.to_text().splitlines()
    head = full[: full.index("rules:")]
    rules = {rule.index: rule for rule in engine.rules}
    closest, by_namespace = [], 0
    for trace in explanation.rules:
        if trace.matched:
            continue
        failed = next((i for i, c in enumerate(trace.conditions) if c.held is False), None)
        rule = rules.get(trace.index)
        if failed is not None and rule is not None and rule.conditions[failed].token.scope == "namespace":
            by_namespace += 1
        else:
            closest.append(trace)
    lines = [*head, f"rules: {len(explanation.rules)} tried"]
    if by_namespace:
        lines.append(f"  {by_namespace} ruled out by a namespace condition")
    for trace in closest[:CLOSEST_SHOWN]:
        lines.append(f"  [{trace.index}] {trace.name}: {trace.reason}")
    if len(closest) > CLOSEST_SHOWN:
        lines.append(f"  ... and {len(closest) - CLOSEST_SHOWN} more whose namespace conditions held")
    result = explanation.result
    lines.append(
        f"winner: {result.rule_name} -> {result.qualified_name} ({result.purview_type})"
        if result.matched
        else f"winner: none - {result.error}"
    )
    lines.append("(--explain --full lists every rule and condition)")
    return "\n".join(lines)


# --- commands -------------------------------------------------------------------------------------------------------


def run_lint(
    config: str | None, out: TextIO, catalog: str | None = None, where: argparse.Namespace | None = None
) -> int:
    if config:
        raw = read_path(config)
        source = config
    else:
        settings = Settings.from_env()
        if settings.mappings_inline:
            raw, source = parse_json(settings.mappings_inline, "app setting OlToPurviewMappings"), "OlToPurviewMappings"
        else:
            raw, source = read_path(settings.mappings_path), rules_source(settings)
    findings: list[Any] = list(lint_config(raw))
    if catalog is not None:
        from .qn_lint_catalog import CatalogLintError, lint_against_catalog

        try:
            findings += lint_against_catalog(unwrap(raw), catalog or None, os.environ, where)
        except CatalogLintError as exc:
            raise UsageError(str(exc)) from None
    for finding in findings:
        out.write(f"{finding}\n")
    out.write(f"{source}: {len(findings)} problem(s)\n" if findings else f"{source}: no problems found\n")
    placement = getattr(where, "placement", None) or Settings.from_env().placement_rules_path
    placement_findings = lint_placement(Path(placement), out) if placement else 0
    return EXIT_LINT_FINDINGS if findings or placement_findings else EXIT_OK


def lint_placement(path: Path, out: TextIO) -> int:
    """Print the problems of a placement rules file (olparser/lineage/placement.py), then a summary line; their count."""
    from olparser.lineage.placement import problems as placement_problems

    try:
        found = placement_problems(json.loads(path.read_text(encoding="utf-8")))
    except OSError as exc:
        found = [f"cannot be read ({exc.strerror})"]
    except ValueError as exc:
        found = [f"not valid JSON ({exc})"]
    for problem in found:
        out.write(f"placement: {problem}\n")
    out.write(f"{path}: {len(found)} problem(s)\n" if found else f"{path}: no problems found\n")
    return len(found)


def run_coverage(config: str | None, out: TextIO, as_json: bool = False, guide: str | None = None) -> int:
    """`qn-tester coverage`: tools.naming_coverage's table (Markdown, or JSON lines; with `guide`, also written
    into that page); exit 1 when a form's computed status differs from the documented one."""
    from .naming_coverage import counts, coverage_rows, guide_with_table, markdown_table, mismatches

    rows = coverage_rows(load_engine(config))
    if guide:
        try:
            page = Path(guide).read_text(encoding="utf-8")
            Path(guide).write_text(guide_with_table(page, markdown_table(rows)), encoding="utf-8")
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot write the table into {guide}: {exc}") from None
    if as_json:
        for row in rows:
            _emit(
                {
                    "store": row.form.store,
                    "producer": row.form.producer,
                    "namespace": row.form.namespace,
                    "name": row.form.name,
                    "qualifiedName": row.qualified_name,
                    "type": row.type_name,
                    "status": row.status,
                    "purview": row.form.purview,
                },
                out,
            )
        _emit({"counts": counts(rows)}, out)
    else:
        out.write(markdown_table(rows))
    wrong = mismatches(rows)
    for line in wrong:
        out.write(f"not as documented: {line}\n")
    return EXIT_LINT_FINDINGS if wrong else EXIT_OK


def answer_json(dataset: Any, link: tuple[str, str] | None = None, linked: bool | None = None) -> dict[str, Any]:
    """What the connector writes for one dataset: its qualifiedName and type (the placeholder, with `error`, when no
    rule names it); with a catalog, the scanned asset it links to, and whether it was found (`Linked`)."""
    out: dict[str, Any] = {"QualifiedName": dataset.qualified_name, "PurviewType": dataset.type_name}
    if link is not None:
        out["PurviewType"], out["QualifiedName"] = link
    if dataset.unmatched_reason:
        out["error"] = dataset.unmatched_reason
    if linked is not None:
        out["Linked"] = linked
    return out


def run_map(args: argparse.Namespace, out: TextIO) -> int:
    engine = load_engine(args.config, sys.stderr)
    listed = load_mounts(args.mounts)  # a bad mounts file is a usage error before anything is mapped
    mounts = mounts_from_facet(listed) if listed else ()
    workspace = args.workspace_url
    if args.namespace is not None:
        namer = dataset_namer(engine, args, args.namespace, listed)
        dataset = namer.resolve(DatasetFacts(args.namespace, args.name))
        _print_hints(args.namespace, args.name, mounts, sys.stderr, dataset.type_name)
        if args.explain:
            explanation = engine.explain(args.namespace, args.name, mounts=mounts, workspace_url=workspace)
            out.write((explanation.to_text() if args.full else explain_summary(explanation, engine)) + "\n")
            out.write(f"written as: {dataset.type_name} {dataset.qualified_name}\n")
            out.write(_candidates_text(namer, args) + "\n")
            return EXIT_UNMATCHED if dataset.unmatched_reason else EXIT_OK
        _emit(_linked_answers([dataset], namer, args)[0], out)
        return EXIT_UNMATCHED if dataset.unmatched_reason else EXIT_OK
    if args.event:
        lines = event_datasets(args.event, engine, mounts, workspace, args.metastore)
        for line in lines:
            _emit(line, out)
        return EXIT_UNMATCHED if any("error" in line for line in lines) else EXIT_OK
    pairs: Iterable[tuple[str, str]]
    if args.batch:
        cases, file_workspace = batch_cases(args.batch)
        args.workspace_url = workspace or file_workspace
        pairs = cases
    else:
        pairs = _prompted_pairs(sys.stdin, out, sys.stderr)
    all_named = True
    for ns, n in pairs:
        namer = dataset_namer(engine, args, ns, listed)
        dataset = namer.resolve(DatasetFacts(ns, n))
        if not args.batch:
            _print_hints(ns, n, mounts, sys.stderr, dataset.type_name)
        all_named &= not dataset.unmatched_reason
        line = _linked_answers([dataset], namer, args)[0]
        if args.batch:
            line = {"namespace": ns, "name": n, **line, "Rule": dataset.rule}
        _emit(line, out)
    # someone typing at the prompts of a terminal saw each miss; Ctrl-D ends that session, not a failed check
    at_terminal = not args.batch and sys.stdin.isatty()
    return EXIT_OK if all_named or at_terminal else EXIT_UNMATCHED


def _linked_answers(datasets: list[Any], namer: DatasetResolver, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The answers for `datasets`; with --catalog, each linked as the connector's resolver links it."""
    if args.explain_catalog is None:
        return [answer_json(d) for d in datasets]
    from .qn_candidates import catalog_links
    from .qn_lint_catalog import CatalogLintError

    named = [d.named(namer.metastore_id) for d in datasets]
    try:
        links = catalog_links(named, args.explain_catalog, os.environ, args)
    except CatalogLintError as exc:
        raise UsageError(str(exc)) from None
    return [answer_json(d, links.get(d.key), d.key in links) for d in datasets]


def _candidates_text(namer: DatasetResolver, args: argparse.Namespace) -> str:
    from .qn_candidates import explain_candidates
    from .qn_lint_catalog import CatalogLintError

    dataset = namer.resolve_name(args.namespace, args.name).named(namer.metastore_id)
    try:
        return explain_candidates(dataset, args.explain_catalog, os.environ, args)
    except CatalogLintError as exc:
        raise UsageError(str(exc)) from None


def _check_usage(args: argparse.Namespace) -> None:
    if (args.namespace is None) != (args.name is None):
        raise UsageError("--namespace and --name go together")
    modes = [
        m
        for m, on in (
            ("--namespace/--name", args.namespace is not None),
            ("--batch", args.batch),
            ("--event", args.event),
        )
        if on
    ]
    if len(modes) > 1:
        raise UsageError(f"choose one of {', '.join(modes)}")
    if args.explain and args.namespace is None:
        raise UsageError("--explain needs --namespace and --name")
    if args.full and not args.explain:
        raise UsageError("--full goes with --explain")
    if args.explain_catalog is not None and args.event:
        raise UsageError("--catalog goes with --namespace/--name, --batch or the prompts (or with lint), not --event")
    if args.namespace is not None and not args.namespace.strip():
        raise UsageError(
            "--namespace is empty (an OpenLineage namespace such as abfss://raw@lake.dfs.core.windows.net)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.atlas_url:  # the flag every command takes: the same as --catalog URL
        if args.command == "lint":
            args.catalog = args.catalog or args.atlas_url
        else:
            args.explain_catalog = args.explain_catalog or args.atlas_url
    try:
        if args.command == "lint":
            return run_lint(args.lint_config or args.config, sys.stdout, args.catalog, args)
        if args.command == "coverage":
            return run_coverage(args.coverage_config or args.config, sys.stdout, args.json, args.guide)
        _check_usage(args)
        return run_map(args, sys.stdout)
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        sys.stderr.write(f"qn-tester: error: {exc}\n")
        return EXIT_USAGE
    except ConfigError as exc:
        sys.stderr.write(f"qn-tester: config error: {exc}\n")
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. piped into `head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
