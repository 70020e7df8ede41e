"""Issue 35 on the lineage page (a real headless Chromium on the catalog page of a real `ol2purview serve`): a run that
an Airflow DAG ran shows it under "Run by", in the process's runs and in the run's details. Events: those of
tests/e2e/test_orchestration.py."""

from __future__ import annotations

import os
import shutil
from typing import Any, Iterator

import pytest

from tests.e2e.lineage_helpers import replay, write_events
from tests.support.chromium import CHROMIUM
from tests.support.history_page import open_browser, open_inputs_of, set_window
from tests.support.orchestration_events import dr_env, orchestrated_events
from tools.functions_host.launcher import ServeHandle, start_serve

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

if not (os.path.exists(CHROMIUM) or shutil.which("chromium")) and not os.environ.get("CI"):
    pytest.skip("chromium is not installed (required in CI)", allow_module_level=True)

OUTPUT = "https://contosolake.dfs.core.windows.net/curated/orders"


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    folder = tmp_path_factory.mktemp("orchestration-page")
    handle = start_serve(folder / "data", env=dr_env())
    try:
        replay(handle, write_events(folder / "events", *orchestrated_events()))
        handle.wait_until_processed(timeout=120)
        yield handle
    finally:
        assert handle.stop() == 0, handle.output()


@pytest.fixture
def page(serve: ServeHandle) -> Iterator[Any]:
    yield from open_browser(serve.catalog_url or "")


def test_a_run_shows_what_ran_it(page):
    open_inputs_of(page, "curated/orders", OUTPUT)
    set_window(page, "2026-03-02T00:00:00Z", "2026-03-03T00:00:00Z")
    page.locator(".node.process").click()
    page.locator("#runs-in-window .run-row").first.wait_for()

    assert page.locator('#runs-in-window .run-row td[data-field="runBy"]').all_inner_texts() == ["airflow/sales_daily"]
    page.locator("#runs-in-window .run-row .run-link").click()
    assert page.locator('.run-metadata dd[data-field="Run by"]').inner_text() == "airflow/sales_daily"
