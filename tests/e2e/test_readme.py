"""The README's Quickstart runs as written on a clone with no `../shared` (issue 36): the repository alone (its
tracked files) is copied to an empty folder, and every fenced command block of the Quickstart (and the `ol2purview
columns` example of the lineage page's guide, docs/guides/lineage-page.md, which names the Quickstart's data) is
executed by bash in that copy, as a user types it in a terminal; each command's promised output is checked.

The serve is started the README's way: the Quickstart's "terminal 1" (`make run`), in the background; "terminal 2"
is `make demo`. The copy gets this checkout's installed tools instead of installing them again (the 2 cores are
shared): its `.venv` is a virtualenv of its own that imports the copy's code and finds the pinned packages of this
checkout's `.venv` on its path (not its editable install: the copy runs its own files), and `node_modules` is a link
to this checkout's; both are up to date for make, so `make run` and `make demo` set up nothing. A user's environment
is the only substitution: OL2PURVIEW_DATA_DIR (a documented setting) names the test's data folder instead of
`.data` (the rules are the one rule file, config/OlToPurviewMappings.json, as by default), and a URL printed in the README as
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

from tests.support.azurite_fixture import require_azurite
from tests.support.repository import PROJECT_ROOT, lone_copy
from tests.support.serves import DEFAULT_PORTS_GROUP
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.azurite, DEFAULT_PORTS_GROUP]
README = PROJECT_ROOT / "README.md"
LINEAGE_PAGE_GUIDE = PROJECT_ROOT / "docs" / "guides" / "lineage-page.md"
TERMINAL_2 = "# terminal 2"
USER_SETTINGS = (
    "AzureWebJobsStorage",
    "ATLAS_ENDPOINT",
    "PURVIEW_ACCOUNT_NAME",
    "OL2PURVIEW_FUNCTION_KEY",
    "OL2PURVIEW_MASTER_KEY",
    "OL2PURVIEW_DATA_DIR",
    "VIRTUAL_ENV",
    "OlToPurviewMappings",
    "OL_TO_PURVIEW_MAPPINGS_PATH",
    "PYTHONPATH",
)
STORE = "https://contosolake.dfs.core.windows.net/silver"
SALES = f"{STORE}/sales/Year={{Year}}/Month={{Month}}/{{SparkPartitions}}"
ORDERS, CUSTOMERS = f"{STORE}/orders/{{SparkPartitions}}", f"{STORE}/customers/{{SparkPartitions}}"
SFTP_FILE = "sftp://files.contoso.com/exports/orders.csv"
SALES_JOB = "execute_insert_into_hadoop_fs_relation_command.sales"
AMOUNT_FROM_ORDERS = f"  -1  {ORDERS} . amount  --IDENTITY-->  {SALES} . amount  via {SALES_JOB}"
REGION_FROM_CUSTOMERS = f"  -1  {CUSTOMERS} . region  --IDENTITY-->  {SALES} . region  via {SALES_JOB}"


def section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


def command_blocks(text: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", text, flags=re.S)


QUICKSTART = command_blocks(section("Quickstart"))
CATALOG_EXAMPLE = [
    line
    for line in command_blocks(LINEAGE_PAGE_GUIDE.read_text(encoding="utf-8"))[0].splitlines()
    if line.startswith("ol2purview columns 'https:")
]


def user_environment(root: Path, data_dir: Path) -> dict[str, str]:
    """A terminal's environment: no connector settings, no virtualenv active, the test's data folder."""
    env = {k: v for k, v in os.environ.items() if k not in USER_SETTINGS}
    env["PATH"] = os.pathsep.join(
        p
        for p in env.get("PATH", "").split(os.pathsep)
        if Path(p).resolve() != (PROJECT_ROOT / ".venv" / "bin").resolve()
    )
    return {
        **env,
        "OL2PURVIEW_DATA_DIR": str(data_dir),
        "PYTHONUNBUFFERED": "1",
    }


class Terminal1:
    """The Quickstart's first terminal: its commands run in the background until the serve prints `ready`."""

    def __init__(self, root: Path, script: str, env: dict[str, str], log_path: Path) -> None:
        self.root = root
        self.log_path = log_path
        self.data_dir = Path(env["OL2PURVIEW_DATA_DIR"])
        with open(log_path, "wb") as log:  # a file, not a pipe: a full pipe would block the server
            self.process = subprocess.Popen(
                ["bash", "-e", "-c", script],
                cwd=root,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_until(
            lambda: self.printed("ready: ") or self.process.poll() is not None,
            timeout=120,
            what="the serve of `make run` to print ready",
        )
        assert self.process.poll() is None, self.output()
        self.url = self.printed("ready: ")
        self.catalog = (self.printed("catalog page: ") or "").rstrip("/")

    def output(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def printed(self, prefix: str) -> str | None:
        line = next((line for line in self.output().splitlines() if line.startswith(prefix)), None)
        return line[len(prefix) :].split()[0] if line else None

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
    root = lone_copy(tmp_path_factory.mktemp("clone"))
    data_dir = tmp_path_factory.mktemp("readme-data")
    env = user_environment(root, data_dir)
    first, _second = QUICKSTART[0].split(TERMINAL_2)
    serve = Terminal1(root, first, env, data_dir.parent / f"{data_dir.name}-make-run.log")
    try:
        yield serve, env
    finally:
        serve.stop()
        assert "Traceback" not in serve.output(), serve.output()


def run_block(script: str, serve: Terminal1, env: dict[str, str], activate: bool) -> subprocess.CompletedProcess:
    """A block as typed in the second terminal; README URLs replaced by the ones the serve printed."""
    script = script.replace("http://127.0.0.1:7071", serve.url).replace("http://127.0.0.1:21000", serve.catalog)
    prefix = ". .venv/bin/activate\n" if activate else ""
    return subprocess.run(
        ["bash", "-e", "-c", prefix + script], cwd=serve.root, env=env, capture_output=True, text=True, timeout=300
    )


def demo(done: subprocess.CompletedProcess, serve: Terminal1) -> None:
    """`make demo`: the lake scanned (resource sets), 26 events all accepted and processed, system-table rows
    written, then what to open; the page shows what the Quickstart says (checked through the catalog's API, which
    the page reads)."""
    out = done.stdout
    assert "1 filesystem, 3 resource sets (10 files), 1 single file: 5 created, 0 updated, 0 unchanged" in out
    assert f"26 events to {serve.url}/api/v1/lineage: 26 accepted, 0 refused" in out.splitlines()
    assert "(3 table lineage rows, 6 column lineage rows)" in out
    assert f"demo loaded. Open {serve.catalog}/ and search `sales`" in out
    rows = serve.data_dir / "demo" / "system-tables" / "table_lineage" / "part-00000.json"
    assert [json.loads(line)["target_table_full_name"] for line in rows.read_text().splitlines()] == [
        "main.sales.daily_revenue"
    ] * 3
    atlas = f"{serve.catalog}/api/atlas/v2"
    found = requests.get(f"{atlas}/search/basic", params={"query": "sales"}, timeout=10).json()["entities"]
    assert SALES in {e["attributes"]["qualifiedName"] for e in found}
    processes = requests.get(f"{atlas}/search/basic", params={"typeName": "databricks_process"}, timeout=10).json()
    writer = next(e for e in processes["entities"] if e["attributes"]["qualifiedName"].endswith("/silver/sales"))
    entity = requests.get(f"{atlas}/entity/guid/{writer['guid']}", timeout=10).json()["entity"]["attributes"]
    assert sorted(i["uniqueAttributes"]["qualifiedName"] for i in entity["inputs"]) == [CUSTOMERS, ORDERS]
    assert [o["uniqueAttributes"]["qualifiedName"] for o in entity["outputs"]] == [SALES]


def columns_and_history(done: subprocess.CompletedProcess, serve: Terminal1) -> None:
    """`amount` comes from orders' amount, and before that from the SFTP file; the week has 8 runs, one FAIL."""
    lines = done.stdout.splitlines()
    assert lines[:2] == [f"Column lineage of {SALES} . amount  (up, depth 10)", "upstream: 2 edge(s)"]
    assert AMOUNT_FROM_ORDERS in lines
    assert any(line.startswith(f"  -2  {SFTP_FILE} . amount  --IDENTITY-->  {ORDERS} . amount") for line in lines)
    history = lines[lines.index(next(line for line in lines if line.startswith("Lineage of "))) :]
    runs = history[history.index("runs (8)") + 2 :]
    statuses = [line.split()[1] for line in runs]
    assert sorted(statuses) == ["COMPLETE"] * 7 + ["FAIL"]


def status(done: subprocess.CompletedProcess, serve: Terminal1) -> None:
    """ "state": "Running", the queue depths, what the triggers processed, the catalog, the rules in force."""
    answer = json.loads(done.stdout)
    lineage = answer["queues"]["lineage-events"]
    assert (answer["state"], lineage["approximateCount"], lineage["poisonCount"], answer["catalog"]["url"]) == (
        "Running",
        0,
        0,
        f"{serve.catalog}/",
    )
    assert answer["worker"]["succeeded"] >= 26 and answer["worker"]["poisoned"] == 0
    assert answer["rules"]["ok"] is True


Check = Callable[[subprocess.CompletedProcess, Terminal1], None]
# What each Quickstart block promises, in README order (its terminal-2 part for the first block).
QUICKSTART_CHECKS: list[Check] = [demo, columns_and_history, status]


def test_the_quickstart_runs_as_written_on_the_repository_alone(terminal):
    serve, env = terminal
    assert len(QUICKSTART) == len(QUICKSTART_CHECKS), "a Quickstart block was added or removed: say what it promises"
    assert len(CATALOG_EXAMPLE) == 1, "the `ol2purview columns` example of the lineage page's guide"
    executed = 0
    for number, (block, check) in enumerate(zip(QUICKSTART, QUICKSTART_CHECKS, strict=True)):
        script = block.split(TERMINAL_2)[1] if number == 0 else block
        done = run_block(script, serve, env, activate=number > 0)
        assert done.returncode == 0, f"Quickstart block {number + 1}:\n{script}\n{done.stdout}\n{done.stderr}"
        check(done, serve)
        executed += 1
    done = run_block(CATALOG_EXAMPLE[0], serve, env, activate=True)
    assert done.returncode == 0, done.stderr
    assert REGION_FROM_CUSTOMERS in done.stdout.splitlines()
    executed += 1
    assert executed == 4  # the figure in the report: README and guide command blocks executed
