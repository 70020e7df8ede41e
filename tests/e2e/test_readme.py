"""The README's examples run as written: every fenced command block of the Quickstart (and the `ol2purview columns`
example of the lineage page's guide, docs/guides/lineage-page.md, which names the Quickstart's data) is executed by
bash in the project folder, as a user types it in a terminal, and each command's promised output is checked.

The serve is started the README's way: the Quickstart's "terminal 1" (`make run`), in the background. A user's
environment is the only substitution: OL2PURVIEW_DATA_DIR (a documented setting) names the test's data folder instead
of `.data`, OL_TO_PURVIEW_MAPPINGS_PATH the tests' copy of the rules, and a URL printed in the README as
`http://127.0.0.1:7071` or `:21000` is replaced by the one the serve printed (the ports differ when those are taken,
as a user copying them from the banner would see). Every later block runs after `. .venv/bin/activate`, which the
README says each terminal needs once.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Callable, Iterator

import pytest
import requests

from tests.azurite_fixture import require_azurite
from tests.conftest import PROJECT_ROOT, wait_until
from tests.rules import MAPPINGS_PATH

pytestmark = [pytest.mark.e2e, pytest.mark.azurite]
README = PROJECT_ROOT / "README.md"
LINEAGE_PAGE_GUIDE = PROJECT_ROOT / "docs" / "guides" / "lineage-page.md"
TERMINAL_2 = "# terminal 2"
USER_SETTINGS = ("AzureWebJobsStorage", "ATLAS_ENDPOINT", "PURVIEW_ACCOUNT_NAME", "OL2PURVIEW_FUNCTION_KEY",
                 "OL2PURVIEW_MASTER_KEY", "OL2PURVIEW_DATA_DIR", "VIRTUAL_ENV", "OlToPurviewMappings")
TABLE = "file:/tmp/cll_test/default.tbl1"
SOURCE1, SOURCE2 = "file:/tmp/cll_test/default.cll_source1", "file:/tmp/cll_test/default.cll_source2"
VIA = "via execute_create_hive_table_as_select_command.default_tbl1"
AGG_FROM_C = f"  -1  {SOURCE2} . c  --AGGREGATION-->  {TABLE} . agg  {VIA}"


def section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]


def command_blocks(text: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", text, flags=re.S)


QUICKSTART = command_blocks(section("Quickstart"))
CATALOG_EXAMPLE = [line for line in command_blocks(LINEAGE_PAGE_GUIDE.read_text(encoding="utf-8"))[0].splitlines()
                   if line.startswith("ol2purview columns file:")]


def user_environment(data_dir: Path) -> dict[str, str]:
    """A terminal's environment: no connector settings, the virtualenv not active, the test's data folder and rules."""
    env = {k: v for k, v in os.environ.items() if k not in USER_SETTINGS}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if Path(p).resolve() != (PROJECT_ROOT / ".venv" / "bin").resolve())
    return {**env, "OL2PURVIEW_DATA_DIR": str(data_dir), "OL_TO_PURVIEW_MAPPINGS_PATH": str(MAPPINGS_PATH),
            "PYTHONUNBUFFERED": "1"}


class Terminal1:
    """The Quickstart's first terminal: its commands run in the background until the serve prints `ready`."""

    def __init__(self, script: str, env: dict[str, str], log_path: Path) -> None:
        self.log_path = log_path
        self.data_dir = Path(env["OL2PURVIEW_DATA_DIR"])
        with open(log_path, "wb") as log:  # a file, not a pipe: a full pipe would block the server
            self.process = subprocess.Popen(["bash", "-e", "-c", script], cwd=PROJECT_ROOT, env=env, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        wait_until(lambda: self.printed("ready: ") or self.process.poll() is not None, timeout=120,
                   what="the serve of `make run` to print ready")
        assert self.process.poll() is None, self.output()
        self.url = self.printed("ready: ")
        self.catalog = (self.printed("catalog page: ") or "").rstrip("/")

    def output(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def printed(self, prefix: str) -> str | None:
        line = next((line for line in self.output().splitlines() if line.startswith(prefix)), None)
        return line[len(prefix):].split()[0] if line else None

    def stop(self) -> int:
        """Ctrl-C in that terminal: SIGINT to its process group (make and the serve)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
        try:
            return self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            return self.process.wait()


@pytest.fixture(scope="module")
def terminal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Terminal1, dict[str, str]]]:
    require_azurite()
    data_dir = tmp_path_factory.mktemp("readme-data")
    env = user_environment(data_dir)
    first, _second = QUICKSTART[0].split(TERMINAL_2)
    serve = Terminal1(first, env, data_dir.parent / f"{data_dir.name}-make-run.log")
    try:
        yield serve, env
    finally:
        serve.stop()
        assert "Traceback" not in serve.output(), serve.output()


def run_block(script: str, serve: Terminal1, env: dict[str, str], activate: bool) -> subprocess.CompletedProcess:
    """A block as typed in the second terminal; README URLs replaced by the ones the serve printed."""
    script = script.replace("http://127.0.0.1:7071", serve.url).replace("http://127.0.0.1:21000", serve.catalog)
    prefix = ". .venv/bin/activate\n" if activate else ""
    return subprocess.run(["bash", "-e", "-c", prefix + script], cwd=PROJECT_ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def replayed(done: subprocess.CompletedProcess, serve: Terminal1) -> None:
    """Terminal 2: `replay` sends the 9 events of the CLL run, all accepted; then the page shows what the Quickstart
    says (checked through the catalog's API, which the page reads)."""
    assert done.stdout.strip() == f"9 events to {serve.url}/api/v1/lineage: 9 accepted, 0 refused"
    master = json.loads((serve.data_dir / "host-keys.json").read_text())["masterKey"]

    def processed() -> bool:
        status = requests.get(f"{serve.url}/admin/ol2purview/status", params={"code": master}, timeout=10).json()
        return status["queues"]["lineage-events"]["approximateCount"] == 0 and not status["worker"].get("inFlight")

    wait_until(processed, timeout=60, what="the 9 events to be processed")
    atlas = f"{serve.catalog}/api/atlas/v2"
    found = requests.get(f"{atlas}/search/basic", params={"query": "tbl1"}, timeout=10).json()["entities"]
    assert TABLE in {e["attributes"]["qualifiedName"] for e in found}
    processes = requests.get(f"{atlas}/search/basic", params={"typeName": "spark_process"}, timeout=10).json()
    writer = next(e for e in processes["entities"] if e["attributes"]["qualifiedName"].endswith(f"/{TABLE}"))
    entity = requests.get(f"{atlas}/entity/guid/{writer['guid']}", timeout=10).json()["entity"]["attributes"]
    assert sorted(i["uniqueAttributes"]["qualifiedName"] for i in entity["inputs"]) == [SOURCE1, SOURCE2]
    mapping = entity["columnMapping"]
    mapping = json.loads(mapping) if isinstance(mapping, str) else mapping
    assert sorted((m["DatasetMapping"]["Source"], c["Source"], c["Sink"]) for m in mapping
                  for c in m["ColumnMapping"]) == [(SOURCE1, "a", "ident"), (SOURCE1, "b", "trans"),
                                                   (SOURCE2, "c", "agg")]


def column_trace(done: subprocess.CompletedProcess, serve: Terminal1) -> None:
    """`c --AGGREGATION--> agg`; a and b (of both sources) only indirectly."""
    lines = done.stdout.splitlines()
    assert lines[:2] == [f"Column lineage of {TABLE} . agg  (up, depth 10)", "upstream: 4 edge(s)"]
    assert AGG_FROM_C in lines
    indirect = sorted(line.split(" . ")[0].split()[-1] + "." + line.split(" . ")[1].split()[0] for line in lines
                      if "[indirect]" in line)
    assert indirect == [f"{SOURCE1}.a", f"{SOURCE1}.b", f"{SOURCE2}.a"]
    assert lines[-1] == f"datasets that influence it only indirectly: {SOURCE1}"


def status(done: subprocess.CompletedProcess, serve: Terminal1) -> None:
    """"state": "Running", the queue depths, what the triggers processed, the catalog."""
    answer = json.loads(done.stdout)
    lineage = answer["queues"]["lineage-events"]
    assert (answer["state"], lineage["approximateCount"], lineage["poisonCount"], answer["catalog"]["url"]) == (
        "Running", 0, 0, f"{serve.catalog}/")
    assert answer["worker"]["succeeded"] >= 9


Check = Callable[[subprocess.CompletedProcess, Terminal1], None]
# What each Quickstart block promises, in README order (its terminal-2 part for the first block).
QUICKSTART_CHECKS: list[Check] = [replayed, column_trace, status]


def test_the_readme_examples_run_as_written(terminal):
    serve, env = terminal
    assert len(QUICKSTART) == len(QUICKSTART_CHECKS), "a Quickstart block was added or removed: say what it promises"
    assert len(CATALOG_EXAMPLE) == 1, "the `ol2purview columns` example of the lineage page section"
    executed = 0
    for number, (block, check) in enumerate(zip(QUICKSTART, QUICKSTART_CHECKS)):
        script = block.split(TERMINAL_2)[1] if number == 0 else block
        done = run_block(script, serve, env, activate=number > 0)
        assert done.returncode == 0, f"Quickstart block {number + 1}:\n{script}\n{done.stdout}\n{done.stderr}"
        check(done, serve)
        executed += 1
    done = run_block(CATALOG_EXAMPLE[0], serve, env, activate=True)
    assert done.returncode == 0, done.stderr
    assert AGG_FROM_C in done.stdout.splitlines()
    executed += 1
    assert executed == 4  # the figure in the report: README command blocks executed
