"""Small lies and noise of issue 36, point 5, that need no server: `--since -24h` as written, `ol2purview --help`
listing every command and sub-command with the exit-code convention, a truncated JSON file reported once as
truncated, and identical refusals summarised on one line."""

from __future__ import annotations

import json

import pytest

from tools import cli
from tools.exit_codes import CONVENTION, FAILED, USAGE, for_http_status
from tools.replay import Outcome, read_events, summary


@pytest.mark.parametrize(
    "argv, since, until",
    [
        (["history", "t", "--since", "-24h", "--until", "-1h"], "-24h", "-1h"),  # as docs/guides/history.md shows it
        (["history", "t", "--since=-7d"], "-7d", None),
        (["history", "t", "--since", "last-run"], "last-run", None),
    ],
)
def test_since_and_until_take_a_leading_minus_as_written(argv, since, until):
    args = cli.full_parser().parse_args(cli.as_written(argv))
    assert (args.since, args.until) == (since, until)


def test_a_minus_that_is_not_a_number_is_still_an_option():
    assert cli.as_written(["history", "t", "--since", "--json"]) == ["history", "t", "--since", "--json"]


def test_help_lists_every_command_and_sub_command_and_the_exit_codes(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    listed = {
        line.strip().split("  ")[0]
        for line in text.split("every command and sub-command")[1].splitlines()[1:]
        if line.startswith("  ")
    }
    assert {
        "catalog scan",
        "spark system-lineage",
        "spark backfill",
        "spark remap",
        "spark history",
        "serve",
        "history",
        "replay",
        "status",
        "requeue",
    } <= listed
    assert listed == {words for words, _help in cli.every_command(cli.full_parser())}
    assert CONVENTION in text


def test_without_a_command_the_help_is_printed_with_the_usage_exit_code(capsys):
    assert cli.main([]) == USAGE
    assert "spark system-lineage" in capsys.readouterr().out


@pytest.mark.parametrize("status, code", [(400, USAGE), (404, USAGE), (401, FAILED), (403, FAILED), (503, FAILED)])
def test_one_exit_code_per_answer(status, code):
    assert for_http_status(status) == code


def test_a_truncated_event_file_is_one_event_reported_as_truncated(tmp_path):
    # An indented event as openlineage-python's file transport writes one, cut short as a partial copy leaves it.
    event = {
        "eventType": "START",
        "eventTime": "2026-11-28T00:00:00Z",
        "producer": "https://example/p",
        "run": {"runId": "01890f0e-5c3b-7b1e-8a3e-1c2d3e4f5a6b"},
        "job": {"namespace": "ns", "name": "j"},
        "inputs": [],
        "outputs": [],
    }
    path = tmp_path / "1.json"
    text = json.dumps(event, indent=2)
    path.write_text(text[: len(text) // 2])
    [read] = read_events(path)
    assert (read.source, read.event, read.problem) == (
        str(path),
        None,
        f"not JSON: truncated (the text ends at line {text[: len(text) // 2].count(chr(10)) + 1} before the JSON does)",
    )
    broken = tmp_path / "2.json"
    broken.write_text('{\n  "eventType": "START",,\n  "x": 1\n}')
    [read] = read_events(broken)
    assert read.problem == "not JSON: Expecting property name enclosed in double quotes at line 2, column 24"


def test_json_lines_are_still_read_line_by_line(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"a": 1}\n{"b": 2}\n{"c": \n')
    assert [(e.source.rsplit("/", 1)[1], e.problem) for e in read_events(path)] == [
        ("events.jsonl:1", None),
        ("events.jsonl:2", None),
        ("events.jsonl:3", "not JSON: Expecting value"),
    ]


def test_identical_refusals_are_one_line():
    refused = [
        Outcome("1.json", False, 401, "missing or wrong function key"),
        *(
            Outcome(f"{n}.json", False, None, "not sent: the endpoint refused the key (401 above)")
            for n in range(2, 10)
        ),
    ]
    assert summary(refused, "http://h/api/v1/lineage").splitlines() == [
        "9 events to http://h/api/v1/lineage: 0 accepted, 9 refused",
        "  401 1.json: missing or wrong function key",
        "  --- 2.json (and 7 more after it): not sent: the endpoint refused the key (401 above)",
    ]
