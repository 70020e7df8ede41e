"""qn-tester: try, explain and lint OpenLineage → Purview qualified-name mappings.

  qn-tester                                   prompt for nameSpace and name until end of input
  qn-tester --namespace NS --name NAME        one mapping as a JSON line
  qn-tester --namespace NS --name NAME --explain
  qn-tester --batch FILE|-                    JSON lines {"namespace", "name"} or a JSON file with a "cases" list
  qn-tester --event FILE                      every input and output of an OpenLineage event
  qn-tester lint [--config PATH]              problems in a mapping config

Exit codes: 0 every input matched a rule; 3 some input matched none; 2 usage or config error; lint: 1 problems found.
The config is --config PATH, else the app setting OlToPurviewMappings (inline JSON), else
OL_TO_PURVIEW_MAPPINGS_PATH, else config/OlToPurviewMappings.json.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Iterable, Iterator, TextIO

from olparser.naming import ConfigError, MappingEngine, MappingResult, MountPoint, mounts_from_facet
from olparser.naming.lint import lint_config
from olparser.naming.rules import parse_json, read_path
from olparser.settings import Settings

EXIT_OK, EXIT_LINT_FINDINGS, EXIT_USAGE, EXIT_UNMATCHED = 0, 1, 2, 3


class UsageError(Exception):
    """Bad arguments or unreadable input files: exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qn-tester",
        description="Map OpenLineage (namespace, name) pairs to Purview qualified names with the mapping rules.",
    )
    parser.add_argument("--config", metavar="PATH", help="mapping config (default: the app setting or the shipped file)")
    parser.add_argument("--namespace", metavar="NS", help="OpenLineage dataset namespace")
    parser.add_argument("--name", metavar="NAME", help="OpenLineage dataset name")
    parser.add_argument("--mounts", metavar="FILE", help="Databricks mount points: a JSON list of {mountPoint, source}")
    parser.add_argument("--workspace-url", metavar="HOST", help="Databricks workspace host, for Hive tables")
    parser.add_argument("--explain", action="store_true", help="show tokens and each rule's conditions")
    parser.add_argument("--batch", metavar="FILE", help="JSON lines of {namespace, name}, or a JSON file with 'cases' (- for stdin)")
    parser.add_argument("--event", metavar="FILE", help="an OpenLineage event: map all its inputs and outputs")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    lint = sub.add_parser("lint", help="check a mapping config", description="Check a mapping config for problems.")
    lint.add_argument("--config", dest="lint_config", metavar="PATH", help="mapping config to check")
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
        return [_case(c, f"case {i}") for i, c in enumerate(whole["cases"])], workspace if isinstance(workspace, str) else None
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
    if not isinstance(item, dict) or not isinstance(item.get("namespace"), str) or not isinstance(item.get("name"), str):
        raise UsageError(f"{where}: expected an object with string 'namespace' and 'name'")
    return item["namespace"], item["name"]


def event_datasets(path: str) -> tuple[list[tuple[str, str, str]], tuple[MountPoint, ...]]:
    """(direction, namespace, name) for each input and output, and the mount points from the run facets."""
    event = _read_json_file(path, "event file")
    if not isinstance(event, dict):
        raise UsageError(f"event file {path}: expected a JSON object (one OpenLineage event)")
    datasets = []
    for key, direction in (("inputs", "input"), ("outputs", "output")):
        for item in event.get(key) or []:
            if isinstance(item, dict) and isinstance(item.get("namespace"), str) and isinstance(item.get("name"), str):
                datasets.append((direction, item["namespace"], item["name"]))
    run = event.get("run") if isinstance(event.get("run"), dict) else {}
    facets = run.get("facets") if isinstance(run.get("facets"), dict) else {}
    return datasets, mounts_from_facet(facets.get("environment-properties"))


# --- outputs --------------------------------------------------------------------------------------------------------


def result_json(result: MappingResult) -> dict[str, Any]:
    out: dict[str, Any] = {"QualifiedName": result.qualified_name, "PurviewType": result.purview_type}
    if not result.matched:
        out["error"] = result.error
    return out


def _emit(obj: dict[str, Any], out: TextIO) -> None:
    out.write(json.dumps(obj) + "\n")
    out.flush()


def _prompted_pairs(stdin: TextIO, out: TextIO) -> Iterator[tuple[str, str]]:
    interactive = stdin.isatty()
    while True:
        if interactive:
            out.write("nameSpace: ")
            out.flush()
        namespace = stdin.readline()
        if interactive and namespace:
            out.write("name: ")
            out.flush()
        name = stdin.readline()
        if not namespace or not name:
            return
        yield namespace.rstrip("\r\n"), name.rstrip("\r\n")


# --- commands -------------------------------------------------------------------------------------------------------


def run_lint(config: str | None, out: TextIO) -> int:
    if config:
        raw = read_path(config)
        source = config
    else:
        settings = Settings.from_env()
        if settings.mappings_inline:
            raw, source = parse_json(settings.mappings_inline, "app setting OlToPurviewMappings"), "OlToPurviewMappings"
        else:
            raw, source = read_path(settings.mappings_path), str(settings.mappings_path)
    findings = lint_config(raw)
    for finding in findings:
        out.write(f"{finding}\n")
    out.write(f"{source}: {len(findings)} problem(s)\n" if findings else f"{source}: no problems found\n")
    return EXIT_LINT_FINDINGS if findings else EXIT_OK


def run_map(args: argparse.Namespace, out: TextIO) -> int:
    engine = load_engine(args.config)
    mounts = load_mounts(args.mounts)
    workspace = args.workspace_url
    if args.namespace is not None:
        if args.explain:
            explanation = engine.explain(args.namespace, args.name, mounts=mounts, workspace_url=workspace)
            out.write(explanation.to_text() + "\n")
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
        datasets, event_mounts = event_datasets(args.event)
        mounts = mounts or event_mounts
        rows = [({"direction": d, "namespace": ns, "name": n}, ns, n) for d, ns, n in datasets]
    else:
        rows = (({"namespace": ns, "name": n}, ns, n) for ns, n in _prompted_pairs(sys.stdin, out))
    detailed = bool(args.batch or args.event)
    all_matched = True
    for head, ns, n in rows:
        result = engine.map(ns, n, mounts=mounts, workspace_url=workspace)
        all_matched &= result.matched
        line = {**head, **result_json(result), "Rule": result.rule_name} if detailed else result_json(result)
        _emit(line, out)
    return EXIT_OK if all_matched else EXIT_UNMATCHED


def _check_usage(args: argparse.Namespace) -> None:
    if (args.namespace is None) != (args.name is None):
        raise UsageError("--namespace and --name go together")
    modes = [m for m, on in (("--namespace/--name", args.namespace is not None), ("--batch", args.batch), ("--event", args.event)) if on]
    if len(modes) > 1:
        raise UsageError(f"choose one of {', '.join(modes)}")
    if args.explain and args.namespace is None:
        raise UsageError("--explain needs --namespace and --name")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "lint":
            return run_lint(args.lint_config or args.config, sys.stdout)
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
