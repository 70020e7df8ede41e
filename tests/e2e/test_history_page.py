"""The lineage page's time window in a real headless Chromium, on the catalog page of a real `ol2purview serve` that
processed the week of tests/history_scenario.py: a window redraws a dataset's lineage from the run history (the
catalog server asks serve with the key; the page never sees it), a process lists its runs in the window, a run shows
its metadata, failed runs are marked, the quick choices work, and "now" goes back to the catalog's lineage. A
catalog with no serve behind it says the window needs one. `UPDATE_SCREENSHOT=1` rewrites docs/lineage-window.png."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests

from tests.e2e.lineage_helpers import SEQUENTIAL_ENV, replay, write_events
from tests.support import history_scenario as week
from tests.support.chromium import CHROMIUM
from tests.support.history_page import open_browser, open_inputs_of, set_window
from tests.support.waiting import wait_until
from tools.catalog import CatalogServer
from tools.catalog.history_link import HistoryLink
from tools.functions_host.launcher import ServeHandle, start_serve

pytestmark = [pytest.mark.browser, pytest.mark.e2e]
DOCS = Path(__file__).resolve().parents[2] / "docs"

if not (os.path.exists(CHROMIUM) or shutil.which("chromium")) and not os.environ.get("CI"):
    pytest.skip("chromium is not installed (required in CI)", allow_module_level=True)


def open_curated(page: Any) -> None:
    open_inputs_of(page, "curated/orders", week.CURATED)


def graph(page: Any) -> dict[str, str]:
    nodes = page.locator("#graph .node")
    return {
        week.NAMES.get(nodes.nth(i).get_attribute("data-qualified-name"), "?"): nodes.nth(i).get_attribute("class")
        for i in range(nodes.count())
    }


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    folder = tmp_path_factory.mktemp("history-page")
    handle = start_serve(
        folder / "data",
        env={
            **SEQUENTIAL_ENV,
            "RUN_HISTORY_DAYS": "36500",
            "INCOMPLETE_RUN_SECONDS": "1",
            "LINEAGE_TIMER_SCHEDULE": "*/1 * * * * *",
        },
    )
    try:
        replay(handle, write_events(folder / "events", *week.week_events()))
        handle.wait_until_processed(timeout=120)
        wait_until(
            lambda: (
                requests.get(
                    f"{handle.url}/api/ol2purview/runs/{week.RUNS['r5']}",
                    timeout=10,
                    headers={"x-functions-key": handle.key},
                ).status_code
                == 200
            ),
            what="the timer recording r5",
        )
        yield handle
    finally:
        assert handle.stop() == 0, handle.output()


@pytest.fixture
def page(serve: ServeHandle) -> Iterator[Any]:
    yield from open_browser(serve.catalog_url or "")


def run_rows(page: Any) -> list[tuple[str, str]]:
    rows = page.locator("#runs-in-window .run-row")
    return [
        (week.NUMBERS[rows.nth(i).get_attribute("data-run-id")], rows.nth(i).get_attribute("class"))
        for i in range(rows.count())
    ]


def test_a_time_window_redraws_the_lineage_lists_runs_and_shows_a_run(page, serve):
    open_curated(page)
    set_window(page, *week.TUESDAY)
    assert graph(page) == {
        "ORDERS": "node dataset",
        "CUSTOMERS": "node dataset",
        "ORDERS_JOB": "node process",
        "CURATED": "node dataset base selected",
    }
    assert page.locator("#status").inner_text() == (
        "3 dataset(s), 1 process(es), 1 run(s) from 2026-03-03T00:00:00.000Z to 2026-03-04T00:00:00.000Z."
    )
    assert sorted(
        page.locator("path.edge").evaluate_all(
            "edges => edges.map(e => e.dataset.from.slice(2) + ' > ' + e.dataset.to.slice(2))"
        )
    ) == sorted(
        [
            f"{week.CUSTOMERS} > {week.ORDERS_JOB}",
            f"{week.ORDERS} > {week.ORDERS_JOB}",
            f"{week.ORDERS_JOB} > {week.CURATED}",
        ]
    )

    set_window(page, *week.WEEK)  # the failed run marks its process; customers read on Tue and Wed only
    assert graph(page)["ORDERS_JOB"] == "node process failed"
    assert page.locator(".node.process .kind").text_content() == "5 run(s), 1 failed"
    page.locator(".node.process").click()
    page.locator("#runs-in-window .run-row").first.wait_for()
    assert run_rows(page) == [
        ("r5", "run-row run-open"),
        ("r4", "run-row"),
        ("r3", "run-row run-failed"),
        ("r2", "run-row"),
        ("r1", "run-row"),
    ]
    page.locator(f'#runs-in-window .run-row[data-run-id="{week.RUNS["r3"]}"] .run-link').click()
    page.locator(f'.run-metadata[data-run-id="{week.RUNS["r3"]}"]').wait_for()
    fields = {
        k: page.locator(f'.run-metadata dd[data-field="{k}"]').inner_text()
        for k in ("Status", "Start", "End", "Duration", "User", "notebookPath", "clusterName")
    }
    assert fields == {
        "Status": "FAIL",
        "Start": "2026-03-04T08:00:00.000Z",
        "End": "2026-03-04T08:00:02.000Z",
        "Duration": "2.0 s",
        "User": "etl@contoso.com",
        "notebookPath": "/Repos/etl/orders",
        "clusterName": "etl-cluster",
    }
    assert [r.split("\t") for r in page.locator(".run-accesses-row").all_inner_texts()] == [
        [week.CUSTOMERS, "read", week.ORDERS_JOB],
        [week.ORDERS, "read", week.ORDERS_JOB],
        [week.CURATED, "write", week.ORDERS_JOB],
    ]
    if os.environ.get("UPDATE_SCREENSHOT") == "1":
        page.screenshot(path=str(DOCS / "lineage-window.png"))

    set_window(page, *week.THURSDAY)  # customers dropped
    assert set(graph(page)) == {"ORDERS", "ORDERS_JOB", "CURATED"}

    page.click('#time-window button[data-window="24h"]')  # only r5, which never ended, is in the last day
    page.locator("#status", has_text="1 run(s)").wait_for()
    page.locator(".node.process").click()
    assert run_rows(page) == [("r5", "run-row run-open")]
    page.click('#time-window button[data-window="last-run"]')  # the newest run that wrote curated orders: r5
    page.locator("#status", has_text="from 2026-03-06T08:00:00.000Z").wait_for()

    page.click("#window-clear")  # back to the catalog's current lineage
    page.locator("#status", has_text="node(s)").wait_for()
    assert graph(page)["ORDERS_JOB"] == "node process"
    seen = "\n".join(page.requests_seen)  # type: ignore[attr-defined]
    assert serve.key not in seen and "/api/ol2purview/" not in seen  # the key never reaches the browser


def test_without_a_running_serve_the_window_says_it_needs_one(tmp_path):
    catalog = CatalogServer(tmp_path / "catalog.sqlite", history=HistoryLink(tmp_path / "no-serve")).start()
    try:
        for page in open_browser(catalog.url):
            page.locator('#time-window[data-available="false"]').wait_for(state="attached")
            assert page.locator("#window-note").inner_text() == "needs a running ol2purview serve"
            assert page.locator("#window-apply").is_disabled()
            answer = requests.get(
                f"{catalog.url}/_ol2purview/page/history/lineage", params={"qualifiedName": "x"}, timeout=10
            )
            assert (answer.status_code, answer.json()["errorMessage"].split(":")[0]) == (
                503,
                "the time window needs a running `ol2purview serve` on " + str(tmp_path / "no-serve"),
            )
    finally:
        catalog.stop()
