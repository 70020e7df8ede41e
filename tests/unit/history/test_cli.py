"""`ol2purview history` without a host to ask, against a closed port, and its column view (the tables themselves are
checked against a real serve in tests/e2e/test_history.py)."""

from __future__ import annotations

from tools.cli import main
from tools.history import render_text


def test_without_a_serve_or_a_url_it_says_what_to_pass(tmp_path, capsys):
    assert main(["history", "q", "--data", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"ol2purview history: no --url given and no `ol2purview serve` is running on {tmp_path}: start it, or pass "
        "--url URL --key KEY (or --data DIR of the running serve)"
    )


def test_a_host_that_does_not_answer_is_exit_1(closed_port, capsys):
    assert main(["history", "q", "--url", f"http://127.0.0.1:{closed_port}", "--key", "k", "--timeout", "5"]) == 1
    assert capsys.readouterr().err.strip() == (
        f"ol2purview history: cannot reach http://127.0.0.1:{closed_port}/api/ol2purview/lineage (ConnectionError)"
    )


def test_column_edges_are_listed_with_their_process_and_runs():
    answer = {
        "qualifiedName": "gold",
        "column": "amount",
        "direction": "upstream",
        "depth": 2,
        "since": "S",
        "until": "U",
        "truncated": "more than 5 history rows",
        "datasets": [{"qualifiedName": "gold", "typeName": "t", "distance": 0}],
        "processes": [
            {
                "qualifiedName": "p-qn",
                "typeName": "t",
                "name": "sum_job",
                "distance": -1,
                "runCount": 2,
                "runs": [
                    {"runId": "r2", "status": "INCOMPLETE", "start": "S2", "end": None, "durationMs": None, "user": ""},
                    {"runId": "r1", "status": "ABORT", "start": "S1", "end": "E1", "durationMs": 1500, "user": "u"},
                ],
            }
        ],
        "edges": [],
        "columnEdges": [
            {
                "from": {"dataset": "silver", "column": "amount"},
                "to": {"dataset": "gold", "column": "amount"},
                "process": "p-qn",
                "label": "AGGREGATION",
                "runs": ["r2", "r1"],
            }
        ],
    }
    lines = render_text(answer).splitlines()
    assert lines[:2] == [
        "Lineage of gold . amount (upstream, depth 2) from S to U",
        "cut short: more than 5 history rows",
    ]
    assert "  silver . amount  --AGGREGATION-->  gold . amount  via sum_job  runs: r2, r1" in lines
    assert lines[-3:] == [
        "  RUN ID  STATUS      START  END         DURATION  USER  PROCESS",
        "  r2      INCOMPLETE  S2     (running?)" + " " * 18 + "sum_job",
        "  r1      ABORT !     S1     E1          1.5 s     u     sum_job",
    ]
