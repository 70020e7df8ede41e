"""How `ol2purview replay` finds and reads events on disk, and how it reports."""

import json

import pytest

from tools.replay import Outcome, SourcedEvent, event_files, read_events, summary


def test_folders_are_read_in_natural_name_order_skipping_underscore_files(tmp_path):
    for name in ["10.json", "2.json", "1.json", "_config.json", ".hidden.json", "notes.txt", "3.jsonl"]:
        (tmp_path / name).write_text("{}")
    assert [p.name for p in event_files([tmp_path])] == ["1.json", "2.json", "3.jsonl", "10.json"]


def test_files_keep_the_order_given(tmp_path):
    (tmp_path / "b.json").write_text("{}")
    (tmp_path / "a.json").write_text("{}")
    assert [p.name for p in event_files([tmp_path / "b.json", tmp_path / "a.json"])] == ["b.json", "a.json"]


def test_a_missing_path_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError) as raised:
        event_files([tmp_path / "nope"])
    assert str(raised.value) == f"no such file or folder: {tmp_path / 'nope'}"


def test_object_array_and_json_lines_files(tmp_path):
    (tmp_path / "one.json").write_text(json.dumps({"a": 1}))
    (tmp_path / "many.json").write_text(json.dumps([{"a": 1}, 5]))
    (tmp_path / "lines.jsonl").write_text('{"a": 1}\n\n{"a": 2\n{"a": 3}\n')
    assert read_events(tmp_path / "one.json") == [SourcedEvent(str(tmp_path / "one.json"), {"a": 1})]
    assert read_events(tmp_path / "many.json") == [
        SourcedEvent(f"{tmp_path / 'many.json'}[0]", {"a": 1}),
        SourcedEvent(f"{tmp_path / 'many.json'}[1]", None, "not a JSON object but int"),
    ]
    lines = read_events(tmp_path / "lines.jsonl")
    assert [(e.source.rsplit(":", 1)[1], e.event, e.problem) for e in lines] == [
        ("1", {"a": 1}, None),
        ("3", None, "not JSON: Expecting ',' delimiter"),
        ("4", {"a": 3}, None),
    ]


def test_a_broken_single_document_is_reported_not_raised(tmp_path):
    (tmp_path / "broken.json").write_text('{"a": ')
    assert read_events(tmp_path / "broken.json") == [
        SourcedEvent(
            str(tmp_path / "broken.json"), None, "not JSON: truncated (the text ends at line 1 before the JSON does)"
        )
    ]


def test_summary_lists_refusals_with_status_and_reason():
    outcomes = [
        Outcome("a.json", True, 200, "accepted"),
        Outcome("b.json", False, 400, "bad runId (at /run/runId)"),
        Outcome("c.json", False, None, "not sent: not JSON"),
    ]
    assert summary(outcomes, "http://h/api/v1/lineage").splitlines() == [
        "3 events to http://h/api/v1/lineage: 1 accepted, 2 refused",
        "  400 b.json: bad runId (at /run/runId)",
        "  --- c.json: not sent: not JSON",
    ]
