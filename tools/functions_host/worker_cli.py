"""`ol2purview worker`: the queue triggers of function_app.py without HTTP (see tools/functions_host/cli.py)."""

from __future__ import annotations

import argparse

from .cli import add_worker_arguments, run_worker


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_worker_arguments(parser)


def run(args: argparse.Namespace) -> int:
    return run_worker(args)
