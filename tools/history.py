"""`ol2purview history QUALIFIED_NAME`: the lineage of a dataset (or a column) in a time window, with the runs, from
the run history of a running `ol2purview serve` or of any deployed function.

It calls `GET /api/ol2purview/lineage` (function key in the x-functions-key header) and prints the datasets, the
processes with their runs, the edges and the runs as tables, or the answer as JSON (`--json`). Without `--url` it
asks the `serve` running on the data folder with the key that serve keeps. Times go to the endpoint as written:
ISO 8601 (UTC when no offset), `now`, `-24h`, `-7d`, or `last-run` for --since. Exit codes (tools/exit_codes.py): 0
answered, 1 the endpoint refused (a wrong key) or could not answer, 2 usage, a parameter the endpoint refused, or a
dataset no run in the history read or wrote (a misspelled name: the nearest names of the catalog are offered).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Mapping

import requests

from olparser.history.window import DIRECTIONS
from olparser.jsontypes import JSON

from .catalog_options import add_target_arguments, function_endpoint
from .exit_codes import for_http_status

LINEAGE_PATH = "/api/ol2purview/lineage"
FAILED = ("FAIL", "ABORT")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("qualified_name", metavar="QUALIFIED_NAME", help="the dataset's qualifiedName")
    parser.add_argument("--column", help="trace this column through the column lineage each run recorded")
    parser.add_argument(
        "--since",
        help="start of the window: ISO 8601, now, -24h, -7d..., or last-run (default: 24 hours before --until)",
    )
    parser.add_argument("--until", help="end of the window, excluded (default: now)")
    parser.add_argument("--direction", choices=DIRECTIONS, default="both", help="default: both")
    parser.add_argument("--depth", type=int, default=3, help="process hops to follow, 1 to 10 (default 3)")
    parser.add_argument("--json", action="store_true", help="print the endpoint's answer as JSON")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the answer (default 60)")
    add_target_arguments(parser, endpoint=True)


def endpoint(args: argparse.Namespace, env: Mapping[str, str]) -> tuple[str, str | None]:
    """The lineage endpoint's URL and the key to send; ValueError saying what to pass when there is none."""
    url, key = function_endpoint(args, env)
    return url.rstrip("/") + LINEAGE_PATH, key


def query(args: argparse.Namespace) -> JSON:
    params = {"qualifiedName": args.qualified_name, "direction": args.direction, "depth": str(args.depth)}
    params.update({name: value for name in ("since", "until", "column") if (value := getattr(args, name)) is not None})
    return params


def _short(qualified_name: str, names: Mapping[str, str]) -> str:
    return names.get(qualified_name) or qualified_name


def _duration(run: JSON) -> str:
    return "" if run.get("durationMs") is None else f"{run['durationMs'] / 1000:.1f} s"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    return [
        "  " + "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]


def render_text(answer: JSON) -> str:
    """A person's view of GET /lineage: the window, then datasets, processes, edges and runs as tables."""
    root = answer["qualifiedName"] + (f" . {answer['column']}" if answer.get("column") else "")
    lines = [
        f"Lineage of {root} ({answer['direction']}, depth {answer['depth']}) from {answer['since']} to "
        f"{answer['until']}"
    ]
    if answer.get("truncated"):
        lines.append(f"cut short: {answer['truncated']}")
    names = {p["qualifiedName"]: p["name"] or p["qualifiedName"] for p in answer["processes"]}
    lines += [
        f"datasets ({len(answer['datasets'])})",
        *_table(
            ["DISTANCE", "TYPE", "QUALIFIED NAME"],
            [[f"{d['distance']:+d}", d["typeName"], d["qualifiedName"]] for d in answer["datasets"]],
        ),
    ]
    lines += [
        f"processes ({len(answer['processes'])})",
        *_table(
            ["DISTANCE", "RUNS", "FAILED", "NAME", "QUALIFIED NAME"],
            [
                [
                    f"{p['distance']:+d}",
                    str(p["runCount"]),
                    str(sum(1 for r in p["runs"] if r["status"] in FAILED)),
                    p["name"],
                    p["qualifiedName"],
                ]
                for p in answer["processes"]
            ],
        ),
    ]
    distance = {node["qualifiedName"]: node["distance"] for node in (*answer["datasets"], *answer["processes"])}
    lines.append(f"edges ({len(answer['edges'])})")
    for edge in sorted(
        answer["edges"], key=lambda e: (distance.get(e["from"], 0), distance.get(e["to"], 0), e["from"], e["to"])
    ):
        arrow = "--read-->" if edge["kind"] == "read" else "--write-->"
        lines.append(
            f"  {_short(edge['from'], names)}  {arrow}  {_short(edge['to'], names)}  runs: {', '.join(edge['runs'])}"
        )
    if answer.get("column"):
        lines.append(f"column edges ({len(answer['columnEdges'])})")
        for edge in answer["columnEdges"]:
            lines.append(
                f"  {edge['from']['dataset']} . {edge['from']['column']}  --{edge['label']}-->  "
                f"{edge['to']['dataset']} . {edge['to']['column']}  via {_short(edge['process'], names)}  "
                f"runs: {', '.join(edge['runs'])}"
            )
    runs: dict[str, tuple[JSON, str]] = {}
    for process in answer["processes"]:
        for run in process["runs"]:
            runs.setdefault(run["runId"], (run, process["name"] or process["qualifiedName"]))
    ordered = sorted(runs.values(), key=lambda item: (item[0]["start"], item[0]["runId"]), reverse=True)
    run_by = any(r.get("runBy") for r, _ in ordered)  # the RUN BY column only when something ran some run
    lines += [
        f"runs ({len(ordered)})",
        *_table(
            ["RUN ID", "STATUS", "START", "END", "DURATION", "USER", *(["RUN BY"] if run_by else []), "PROCESS"],
            [
                [
                    r["runId"],
                    r["status"] + (" !" if r["status"] in FAILED else ""),
                    r["start"],
                    r["end"] or "(running?)",
                    _duration(r),
                    r["user"] or "",
                    *([r.get("runBy") or ""] if run_by else []),
                    name,
                ]
                for r, name in ordered
            ],
        ),
    ]
    return "\n".join(lines)


def _nearest_in_catalog(args: argparse.Namespace) -> str:
    """`; nearest: ...` from the datasets of the catalog the tools find (flags, settings, the running serve's), or ""
    when there is none to ask or none is close: a misspelled name is answered with the names meant."""
    from olparser.adapters.catalog import make_atlas_client
    from olparser.settings import Settings

    from .catalog_options import catalog_target
    from .suggest import catalog_dataset_names, offered

    try:
        target = catalog_target(args, Settings.from_env())
        if target.kind == "purview":
            return ""
        client = make_atlas_client(target, timeout=10.0)
        try:
            return offered(args.qualified_name, catalog_dataset_names(client))
        finally:
            client.close()
    except Exception:  # no catalog, or it cannot answer: the error line stands without suggestions
        return ""


def run(args: argparse.Namespace) -> int:
    try:
        url, key = endpoint(args, os.environ)
    except ValueError as error:
        print(f"ol2purview history: {error}", file=sys.stderr)
        return 2
    try:
        response = requests.get(
            url, params=query(args), headers={"x-functions-key": key} if key else {}, timeout=args.timeout
        )
    except requests.RequestException as error:
        print(f"ol2purview history: cannot reach {url} ({type(error).__name__})", file=sys.stderr)
        return 1
    try:
        body = response.json()
    except ValueError:
        body = {"error": response.text.strip()[:300] or response.reason}
    if response.status_code != 200:
        where = f" (parameter {body['path']})" if isinstance(body, dict) and body.get("path") else ""
        message = body.get("error") if isinstance(body, dict) else None
        unknown = response.status_code == 404 and isinstance(body, dict) and body.get("path") == "qualifiedName"
        nearest = _nearest_in_catalog(args) if unknown else ""
        print(
            f"ol2purview history: {response.status_code} {message or json.dumps(body)[:300]}{where}{nearest}",
            file=sys.stderr,
        )
        return for_http_status(response.status_code)
    print(json.dumps(body, indent=2) if args.json else render_text(body))
    return 0
