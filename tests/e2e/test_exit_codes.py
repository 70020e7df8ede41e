"""One exit-code convention across commands (tools/exit_codes.py, docs/guides/troubleshooting.md "Exit codes"): the
same failure gives `replay`, `history` and `status` the same code, and a wrong key is said once (issue 36, point 5:
`history` exited 2 where `replay` and `status` exited 1, and `replay` printed nine identical 401 lines)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.repository import PROJECT_ROOT
from tools.samples.delivery import databricks_run, write_jsonl

pytestmark = pytest.mark.e2e
WRONG_KEY = "not-the-key-of-this-serve"


def ol2purview(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tools.cli", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120
    )


def commands(events: str) -> dict[str, tuple[str, ...]]:
    return {
        "replay": ("replay", events),
        "history": ("history", "abfss://x@y.dfs.core.windows.net/t"),
        "status": ("status",),
    }


def test_a_wrong_key_is_one_refusal_with_the_same_exit_code_everywhere(serve, tmp_path):
    events = write_jsonl(tmp_path / "run.jsonl", databricks_run(1) + databricks_run(2) + databricks_run(3))
    sent = sum(1 for _ in events.open())
    codes = {}
    for name, args in commands(str(events)).items():
        done = ol2purview(*args, "--url", serve.url, "--key", WRONG_KEY)
        codes[name] = done.returncode
        if name == "replay":
            lines = done.stdout.splitlines()
            assert lines[0] == f"{sent} events to {serve.url}/api/v1/lineage: 0 accepted, {sent} refused"
            assert [line.split()[0] for line in lines[1:]] == ["401", "---"]  # one 401 line, the rest not sent
            assert lines[2].endswith(
                f"(and {sent - 2} more after it): not sent: the endpoint refused the key (401 above)"
            )
        else:
            assert len(done.stderr.splitlines()) == 1 and "401" in done.stderr, done.stderr
    assert codes == {"replay": 1, "history": 1, "status": 1}


def test_no_serve_to_talk_to_is_usage_everywhere(tmp_path):
    codes = {
        name: ol2purview(*args, "--data", str(tmp_path / "empty")).returncode
        for name, args in {**commands(str(tmp_path)), "demo": ("demo",)}.items()
    }
    assert codes == {"replay": 2, "history": 2, "status": 2, "demo": 2}
    done = ol2purview("demo", "--data", str(tmp_path / "empty"))
    assert done.stderr.splitlines() == [
        f"ol2purview demo: no `ol2purview serve` is running on {tmp_path / 'empty'}: start it first (`make run` in "
        "another terminal), or pass --data DIR of the running serve"
    ]


def test_an_unreachable_endpoint_is_a_failure_everywhere(tmp_path):
    events = write_jsonl(tmp_path / "run.jsonl", databricks_run(1))
    codes = {
        name: ol2purview(*args, "--url", "http://127.0.0.1:9", "--key", WRONG_KEY).returncode
        for name, args in commands(str(events)).items()
    }
    assert codes == {"replay": 1, "history": 1, "status": 1}


def test_the_banner_says_a_real_cluster_cannot_reach_loopback(serve):
    """The Spark settings point at 127.0.0.1 (issue 36, point 5): the banner says what that means and where the
    recipe for a real cluster is (docs/guides/run-locally.md, which has that section)."""
    lines = serve.output().splitlines()
    at = lines.index("Spark / Databricks (cluster Spark config):")
    assert lines[at + 3] == f"  spark.openlineage.transport.url {serve.url}"
    assert lines[at + 7] == (
        "  (127.0.0.1 is this machine: a Spark on it can use these settings, a real cluster "
        "cannot reach them; to try one before deploying, see docs/guides/run-locally.md, "
        "\"Try it from a real cluster\")"
    )
    guide = (PROJECT_ROOT / "docs" / "guides" / "run-locally.md").read_text(encoding="utf-8")
    assert "\n## Try it from a real cluster\n" in guide


# --- issue 43: no traceback reaches a user ---------------------------------------------------------------------------


def test_the_catalog_on_a_busy_port_says_so_in_one_line_and_exits_1(tmp_path):
    """Before: a Python traceback ending in `OSError: [Errno 98] Address already in use`."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = ol2purview("catalog", "--port", str(port), "--db", str(tmp_path / "catalog.sqlite"))
    assert (done.returncode, done.stderr) == (
        1,
        f"ol2purview catalog: cannot listen on 127.0.0.1:{port}: Address already in use (--port 0 takes a free port)\n",
    )


def test_output_into_a_reader_that_went_away_stops_quietly_with_141(serve):
    """`ol2purview history ... | head` (any command's output): before, a BrokenPipeError traceback. The reader's end
    is closed before the answer is written, so the write fails as it does once `head` has its lines."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tools.cli", "status", "--url", serve.url, "--key", serve.master_key],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    process.stdout.close()
    _, stderr = process.communicate(timeout=120)
    assert (process.returncode, stderr) == (141, "")


def test_an_unexpected_error_is_one_line_and_exit_1(tmp_path):
    """The safety net of tools/cli.py: any exception a command did not expect (here a data folder that is a file)."""
    folder = tmp_path / "not-a-folder"
    folder.write_text("x")
    done = subprocess.run(
        [sys.executable, "-m", "tools.cli", "status", "--data", str(folder)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr
    assert done.returncode in (1, 2) and len(done.stderr.splitlines()) == 1, done.stderr
