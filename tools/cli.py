"""`ol2purview`: one console script, one sub-command per tool.

Each sub-command lives in its own module that exposes `add_arguments(parser)` and `run(args) -> int`; modules are
imported only when their sub-command runs, so a tool's dependencies never slow down another.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from .exit_codes import CONVENTION, FAILED, INTERRUPTED, READER_GONE, TRACEBACK_SETTING, USAGE, one_line

# name -> (module, relative to this package: `tools` in the repository, `ol2purview_tools` in the wheel; one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "serve": (".functions_host.cli", "serve function_app.py over HTTP as the Azure Functions host does"),
    "worker": (".functions_host.worker_cli", "run only the queue triggers of function_app.py (as `serve` does)"),
    "catalog": (".catalog.cli", "run the embedded Atlas-compatible catalog with its lineage page"),
    "replay": (".replay", "send OpenLineage events through the openlineage-python HTTP client"),
    "typedefs": (".typedefs", "register the connector's custom Atlas types (create or update)"),
    "requeue": (".requeue", "move poison (dead-letter) messages back onto the lineage queue"),
    "prune": (".prune", "remove processes whose last run is older than N days, and placeholders only they used"),
    "migrate": (".migrate", "take over what another connector wrote (the C# accelerator): print the plan, or --apply"),
    "columns": (".columns", "trace a column's lineage up and down across processes, on any Atlas or Purview"),
    "history": (".history", "lineage of a dataset or column in a time window, with its runs, from the run history"),
    "status": (".status", "what the running local host reports: queue depths, triggers, timers, catalog"),
    "demo": (
        ".demo",
        "load sample data into the running serve: a scanned lake folder, a week of runs, system-table rows",
    ),
    "spark": (".spark.cli", "backfill or re-map archived OpenLineage history on Spark (or in one process)"),
}


# Options whose value may start with "-" (a duration back from now: `--since -24h`). argparse reads such a value as
# an option and fails with "expected one argument"; `as_written` joins them (`--since=-24h`) first.
VALUES_MAY_START_WITH_MINUS = ("--since", "--until")


def as_written(argv: list[str]) -> list[str]:
    """argv with `--since -24h` (and `--until`) joined into `--since=-24h`, which argparse reads as the value."""
    joined: list[str] = []
    words = iter(argv)
    for word in words:
        if word in VALUES_MAY_START_WITH_MINUS:
            value = next(words, None)
            if value is not None and value.startswith("-") and value[1:2].isdigit():
                joined.append(f"{word}={value}")
                continue
            joined.append(word)
            if value is not None:
                joined.append(value)
            continue
        joined.append(word)
    return joined


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    parser = argparse.ArgumentParser(prog="ol2purview", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers = {}
    for name, (_module, help_text) in SUBCOMMANDS.items():
        subparsers[name] = sub.add_parser(name, help=help_text, description=help_text)
    return parser, subparsers


def every_command(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(`command sub-command`, its one-line help) for every command under `parser`, depth first."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                found.append((" ".join(words + (name,)), helps.get(name, "")))
                found += every_command(sub, words + (name,))
    return found


def full_parser() -> argparse.ArgumentParser:
    """The parser with every sub-command's arguments (and sub-commands) added, and an epilog listing them all."""
    parser, subparsers = build_parser()
    for name, (module, _help) in SUBCOMMANDS.items():
        importlib.import_module(module, __package__).add_arguments(subparsers[name])
    commands = every_command(parser)
    width = max(len(words) for words, _help in commands)
    parser.epilog = "\n".join(
        [
            "every command and sub-command (`ol2purview COMMAND --help` for its options):",
            *(f"  {words:<{width}}  {text}" for words, text in commands),
            "",
            CONVENTION,
            "documentation: docs/ (README.md links every page)",
        ]
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = as_written(sys.argv[1:] if argv is None else argv)
    parser, subparsers = build_parser()
    command = argv[0] if argv and argv[0] in SUBCOMMANDS else None
    if command is None:
        parser = full_parser()
        parser.parse_args(argv)  # prints usage / errors, exits 2
        parser.print_help()
        return USAGE
    module = importlib.import_module(SUBCOMMANDS[command][0], __package__)
    module.add_arguments(subparsers[command])
    args = parser.parse_args(argv)
    try:
        return int(module.run(args) or 0)
    except BrokenPipeError:  # the reader of the output went away (`| head`): stop quietly, as a shell reports it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return READER_GONE
    except KeyboardInterrupt:
        return INTERRUPTED
    except Exception as exc:  # no traceback reaches a user: one line, exit 1 (OL2PURVIEW_TRACEBACK=1 shows it)
        if os.environ.get(TRACEBACK_SETTING, "").strip() == "1":
            raise
        print(f"ol2purview {command}: {one_line(exc)} ({TRACEBACK_SETTING}=1 shows where)", file=sys.stderr)
        return FAILED


if __name__ == "__main__":
    sys.exit(main())
