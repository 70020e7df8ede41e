"""The lineage page's time window on `make demo`'s data, in a real headless Chromium (issue 43): after choosing a
quick window (7 days) on the resource set the Quickstart opens, the title names the dataset as the catalog's lineage
does (it read `Lineage of {SparkPartitions}`, the qualifiedName's last segment), From and To show the window chosen
(they stayed blank), and the details' "Edges in the window" is the number of edges drawn (it said 1 beside 5 drawn:
the base dataset's own edges)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from typing import Any, Iterator

import pytest

from tests.e2e.lineage_helpers import Atlas
from tests.support.chromium import CHROMIUM
from tests.support.history_page import open_browser
from tests.support.repository import PROJECT_ROOT
from tools.functions_host.launcher import ServeHandle, start_serve

pytestmark = [pytest.mark.browser, pytest.mark.e2e]
SALES = "https://contosolake.dfs.core.windows.net/silver/sales/Year={Year}/Month={Month}/{SparkPartitions}"

if not (os.path.exists(CHROMIUM) or shutil.which("chromium")) and not os.environ.get("CI"):
    pytest.skip("chromium is not installed (required in CI)", allow_module_level=True)


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    """A serve with `ol2purview demo` loaded into it, as the Quickstart does."""
    handle = start_serve(tmp_path_factory.mktemp("demo") / "data")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tools.cli", "demo", "--data", str(handle.data_dir)],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        handle.wait_until_processed(timeout=120)
        yield handle
    finally:
        assert handle.stop() == 0, handle.output()


@pytest.fixture
def page(serve: ServeHandle) -> Iterator[Any]:
    yield from open_browser(serve.catalog_url or "")


def test_a_quick_window_titles_the_dataset_fills_from_and_to_and_counts_the_drawn_edges(page, serve):
    name = Atlas(serve.atlas_url).entity("azure_datalake_gen2_resource_set", SALES)["attributes"]["name"]
    page.locator('#time-window[data-available="true"]').wait_for(state="attached")
    page.fill("#search-input", "sales")
    page.click("#search-button")
    page.locator(f'.result[data-qualified-name="{SALES}"] > .name').click()
    page.locator(f'.node.base[data-qualified-name="{SALES}"]').wait_for()
    assert page.locator("#graph-title").inner_text() == f"Lineage of {name}"

    page.click('#time-window button[data-window="7d"]')
    page.locator("#status", has_text="run(s)").wait_for()
    title = page.locator("#graph-title").inner_text()
    since, until = title.rsplit(" from ", 1)[1].split(" to ")
    assert title == f"Lineage of {name} from {since} to {until}"
    assert name != "{SparkPartitions}"
    seconds = [re.sub(r"(\.\d+)?Z$", "", time) for time in (since, until)]  # datetime-local: to the second
    assert [page.input_value("#window-since"), page.input_value("#window-until")] == seconds

    drawn = page.locator("path.edge").count()
    assert drawn >= 2
    page.locator(f'.node.base[data-qualified-name="{SALES}"]').click()
    details = dict(
        zip(
            page.locator("#details-summary dt").all_inner_texts(),
            page.locator("#details-summary dd").all_inner_texts(),
            strict=True,
        )
    )
    assert details["Edges in the window"] == str(drawn)
    assert details["Window"] == f"{since} to {until}"
    assert int(details["Edges of this node"]) < drawn  # the base dataset's own edges, counted apart

    page.click("#window-apply")  # the filled From and To apply as they read: the same window, to the second
    page.locator("#status", has_text=f"from {seconds[0]}.000Z to {seconds[1]}.000Z").wait_for()
    assert page.locator("#graph-title").inner_text() == f"Lineage of {name} from {seconds[0]}.000Z to {seconds[1]}.000Z"
