"""`ol2purview status`: what the running local host reports about itself (GET /admin/ol2purview/status with the
master key): its state, queue depths (lineage, poison), what each trigger processed or failed, the timers and the
catalog. Found as every tool finds it (tools/catalog_options.py): without flags, the `ol2purview serve` of the data
folder with the master key it keeps. Exit status 0 when it answered, 1 when it could not be reached or refused.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import requests

from .catalog_options import add_target_arguments, function_endpoint

STATUS_PATH = "/admin/ol2purview/status"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the answer (default 10)")
    add_target_arguments(parser, endpoint=True, master_key=True)


def run(args: argparse.Namespace) -> int:
    try:
        url, key = function_endpoint(args, os.environ, master_key=True)
    except ValueError as exc:
        print(f"ol2purview status: {exc}", file=sys.stderr)
        return 2
    address = url.rstrip("/") + STATUS_PATH
    try:
        answer = requests.get(address, headers={"x-functions-key": key} if key else {}, timeout=args.timeout)
    except requests.RequestException as exc:
        print(f"ol2purview status: {address} could not be reached: {type(exc).__name__}", file=sys.stderr)
        return 1
    if answer.status_code != 200:
        print(f"ol2purview status: {address} answered {answer.status_code}: {answer.text[:300]}", file=sys.stderr)
        return 1
    print(json.dumps(answer.json(), indent=2))
    return 0
