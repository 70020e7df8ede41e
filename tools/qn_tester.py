"""qn-tester: try, explain and lint OpenLineage → Purview qualified-name mappings.

  qn-tester                                   prompt for nameSpace and name until end of input
  qn-tester --namespace NS --name NAME        one mapping as a JSON line
  qn-tester --namespace NS --name NAME --explain [--full] [--catalog [URL]] [--metastore ID]
  qn-tester --batch FILE|-                    JSON lines {"namespace", "name"} or a JSON file with a "cases" list
  qn-tester --event FILE                      every input and output of an OpenLineage event
  qn-tester lint [--config PATH] [--catalog [URL]]   problems in a mapping config (and types the catalog lacks)
  qn-tester coverage [--config PATH] [--json] [--guide PAGE]   the naming spec's forms -> qualifiedName, type,
                                              status, with counts (--guide: write the table into that page)

Exit codes: 0 every input matched a rule (and at the end of prompts on a terminal); 3 some input matched none; 2 usage or config error; lint: 1 problems found.
The config is --config PATH, else the app setting OlToPurviewMappings (inline JSON), else
OL_TO_PURVIEW_MAPPINGS_PATH, else the shipped rules (olparser/naming/shipped; `make lint-config` names config/).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Iterable, Iterator, TextIO

from olparser.naming import ConfigError, MappingEngine, MappingResult, MountPoint, mounts_from_facet
from olparser.naming.engine import Explanation
from olparser.naming.lint import lint_config
from olparser.naming.mounts import DBFS_NAMESPACES
from olparser.naming.rules import parse_json, read_path, unwrap
from olparser.resolution import unity_catalog
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
        "--config", metavar="PATH", help="mapping config (default: the app setting or the shipped file)"
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
        help="with --explain: check the candidates in this catalog (an Atlas v2 URL; without URL: "
        "PURVIEW_ACCOUNT_NAME or ATLAS_ENDPOINT, else the running `ol2purview serve`'s)",
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


def load_engine(config: str | None) -> MappingEngine:
    return MappingEngine.from_path(config) if config else MappingEngine.from_settings(Settings.from_env())


def load_mounts(path: str | None) -> tuple[MountPoint, ...]:
    if not path:
        return ()
    mounts = mounts_from_facet(_read_json_file(path, "mounts file"))
    if not mounts:
        raise UsageError(f"mounts file {path} holds no mount points (expected a list of {{mountPoint, source}})")
    return mounts


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


def result_json(result: MappingResult) -> dict[str, Any]:
    out: dict[str, Any] = {"QualifiedName": result.qualified_name, "PurviewType": result.purview_type}
    if not result.matched:
        out["error"] = result.error
    return out


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


def hints(namespace: str, name: str, mounts: tuple[MountPoint, ...]) -> list[str]:
    """Advice for inputs that usually mean a mistake in how they were typed, not in the rules."""
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
    if unity_catalog.unity_namespace(namespace.strip())[0]:
        found.append(
            "hint: a Unity Catalog table is named from its metastore, not by a rule: try --explain --metastore "
            "ID (the metastore id DATABRICKS_METASTORE_IDS gives), or --event FILE"
        )
    if namespace.lower().startswith("jdbc:"):
        found.append(
            f"hint: OpenLineage namespaces have no 'jdbc:' prefix (Spark sends {namespace[5:]!r}, not "
            f"{namespace!r}): try --namespace {namespace[5:]!r}"
        )
    return found


def _print_hints(namespace: str, name: str, mounts: tuple[MountPoint, ...], err: TextIO) -> None:
    for line in hints(namespace, name, mounts):
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
            raw, source = read_path(settings.mappings_path), str(settings.mappings_path)
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
    """Print the problems of a placement rules file (olparser/placement.py), then a summary line; their count."""
    from olparser.placement import problems as placement_problems

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
    """`qn-tester coverage`: olparser.naming_coverage's table (Markdown, or JSON lines; with `guide`, also written
    into that page); exit 1 when a form's computed status differs from the documented one."""
    from olparser.naming_coverage import counts, coverage_rows, guide_with_table, markdown_table, mismatches

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


def run_map(args: argparse.Namespace, out: TextIO) -> int:
    engine = load_engine(args.config)
    mounts = load_mounts(args.mounts)
    workspace = args.workspace_url
    if args.namespace is not None:
        _print_hints(args.namespace, args.name, mounts, sys.stderr)
        if args.explain:
            explanation = engine.explain(args.namespace, args.name, mounts=mounts, workspace_url=workspace)
            out.write((explanation.to_text() if args.full else explain_summary(explanation, engine)) + "\n")
            out.write(_candidates_text(engine, args, mounts, workspace) + "\n")
            return EXIT_OK if explanation.result.matched else EXIT_UNMATCHED
        result = engine.map(args.namespace, args.name, mounts=mounts, workspace_url=workspace)
        _emit(result_json(result), out)
        return EXIT_OK if result.matched else EXIT_UNMATCHED
    rows: Iterable[tuple[dict[str, str], str, str]]
    if args.batch:
        cases, file_workspace = batch_cases(args.batch)
        rows = [({"namespace": ns, "name": n}, ns, n) for ns, n in cases]
        workspace = workspace or file_workspace
    elif args.event:
        lines = event_datasets(args.event, engine, mounts, workspace, args.metastore)
        for line in lines:
            _emit(line, out)
        return EXIT_UNMATCHED if any("error" in line for line in lines) else EXIT_OK
    else:
        rows = (({"namespace": ns, "name": n}, ns, n) for ns, n in _prompted_pairs(sys.stdin, out, sys.stderr))
    detailed = bool(args.batch or args.event)
    all_matched = True
    for head, ns, n in rows:
        if not detailed:
            _print_hints(ns, n, mounts, sys.stderr)
        result = engine.map(ns, n, mounts=mounts, workspace_url=workspace)
        all_matched &= result.matched
        line = {**head, **result_json(result), "Rule": result.rule_name} if detailed else result_json(result)
        _emit(line, out)
    # someone typing at the prompts of a terminal saw each miss; Ctrl-D ends that session, not a failed check
    at_terminal = not (args.batch or args.event) and sys.stdin.isatty()
    return EXIT_OK if all_matched or at_terminal else EXIT_UNMATCHED


def _candidates_text(
    engine: MappingEngine, args: argparse.Namespace, mounts: tuple[MountPoint, ...], workspace: str | None
) -> str:
    from .qn_candidates import explain_candidates, named_dataset
    from .qn_lint_catalog import CatalogLintError

    dataset = named_dataset(
        engine, args.namespace, args.name, mounts=mounts, workspace_url=workspace, metastore=args.metastore
    )
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
    if args.explain_catalog is not None and not args.explain:
        raise UsageError("--catalog goes with --explain (or with lint)")
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
