"""The lineage page in a real headless Chromium: search, open the graph, see the nodes, open a column mapping."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Iterator

import pytest
from pyapacheatlas.auth import BasicAuthentication
from pyapacheatlas.core import AtlasClient, AtlasEntity, AtlasProcess

from tools.catalog import CatalogServer

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
LAKE = "https://contosolake.dfs.core.windows.net/landing"
WORKSPACE = "adb-1234567890123456.7.azuredatabricks.net"
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "lineage-page.png"

pytestmark = pytest.mark.browser

if not (os.path.exists(CHROMIUM) or shutil.which("chromium")) and not os.environ.get("CI"):
    pytest.skip("chromium is not installed (required in CI)", allow_module_level=True)


def load_known_lineage(client: AtlasClient) -> None:
    """orders.csv + customers.csv -> join_orders -> sales -> aggregate_sales -> sales_summary."""
    client.upload_typedefs({"entityDefs": [{"name": "spark_page_process", "superTypes": ["Process"],
                                            "attributeDefs": [{"name": "columnMapping", "typeName": "string"}]}]})
    orders = AtlasEntity("orders.csv", "azure_datalake_gen2_path", f"{LAKE}/raw/orders.csv", guid="-1")
    customers = AtlasEntity("customers.csv", "azure_datalake_gen2_path", f"{LAKE}/raw/customers.csv", guid="-2")
    sales = AtlasEntity("sales", "hive_table", f"default.sales@{WORKSPACE}", guid="-3")
    summary = AtlasEntity("sales_summary", "hive_table", f"default.sales_summary@{WORKSPACE}", guid="-4")
    join_mapping = [
        {"DatasetMapping": {"Source": orders.qualifiedName, "Sink": sales.qualifiedName},
         "ColumnMapping": [{"Source": "order_id", "Sink": "order_id"}, {"Source": "amount", "Sink": "amount"}]},
        {"DatasetMapping": {"Source": customers.qualifiedName, "Sink": sales.qualifiedName},
         "ColumnMapping": [{"Source": "country", "Sink": "customer_country"}]}]
    join = AtlasProcess("join_orders", "spark_page_process", f"{WORKSPACE}/jobs/1/processes/join_orders",
                        inputs=[orders, customers], outputs=[sales], guid="-5",
                        attributes={"columnMapping": json.dumps(join_mapping)})
    aggregate = AtlasProcess("aggregate_sales", "spark_page_process", f"{WORKSPACE}/jobs/2/processes/aggregate",
                             inputs=[sales], outputs=[summary], guid="-6",
                             attributes={"columnMapping": json.dumps([{
                                 "DatasetMapping": {"Source": sales.qualifiedName, "Sink": summary.qualifiedName},
                                 "ColumnMapping": [{"Source": "amount", "Sink": "total_amount"}]}])})
    client.upload_entities([orders, customers, sales, summary, join, aggregate])


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[CatalogServer]:
    server = CatalogServer(tmp_path / "page.sqlite", user="viewer", password="page-pw").start()
    load_known_lineage(AtlasClient(server.atlas_url, BasicAuthentication("viewer", "page-pw"), requests_timeout=10))
    yield server
    server.stop()


def test_lineage_page_search_graph_and_column_mapping(catalog: CatalogServer) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1500, "height": 820},
                                          http_credentials={"username": "viewer", "password": "page-pw"})
            page = context.new_page()
            page.goto(catalog.url + "/")
            page.fill("#search-input", "sales")
            page.click("#search-button")
            result = page.locator(f'.result[data-qualified-name="default.sales@{WORKSPACE}"]')
            result.wait_for()
            assert page.locator(".result .name").all_inner_texts() == ["aggregate_sales", "sales", "sales_summary"]
            result.click()
            page.locator('.node[data-qualified-name="default.sales_summary@' + WORKSPACE + '"]').wait_for()

            def rendered() -> dict[str, str]:
                nodes = page.locator("#graph .node")
                return {nodes.nth(i).get_attribute("data-qualified-name"): nodes.nth(i).get_attribute("class")
                        for i in range(nodes.count())}

            assert rendered() == {
                f"{LAKE}/raw/orders.csv": "node dataset", f"{LAKE}/raw/customers.csv": "node dataset",
                f"{WORKSPACE}/jobs/1/processes/join_orders": "node process",
                f"default.sales@{WORKSPACE}": "node dataset base selected",  # the base opens selected
                f"{WORKSPACE}/jobs/2/processes/aggregate": "node process",
                f"default.sales_summary@{WORKSPACE}": "node dataset"}
            assert sorted(page.locator("#graph .node .label").all_text_contents()) == [
                "aggregate_sales", "customers.csv", "join_orders", "orders.csv", "sales", "sales_summary"]
            assert page.locator("#graph .edge").count() == 5

            page.click(f'.node.process[data-qualified-name="{WORKSPACE}/jobs/1/processes/join_orders"]')
            page.locator(".column-mapping-row").first.wait_for()
            rows = [[cell.strip() for cell in row.split("\t")]
                    for row in page.locator(".column-mapping-row").all_inner_texts()]
            assert rows == [[f"{LAKE}/raw/orders.csv", f"default.sales@{WORKSPACE}", "order_id", "order_id"],
                            [f"{LAKE}/raw/orders.csv", f"default.sales@{WORKSPACE}", "amount", "amount"],
                            [f"{LAKE}/raw/customers.csv", f"default.sales@{WORKSPACE}", "country",
                             "customer_country"]]
            if os.environ.get("UPDATE_SCREENSHOT") == "1":
                page.screenshot(path=str(SCREENSHOT), full_page=True)

            page.select_option("#direction", "INPUT")  # upstream only: the downstream half disappears
            page.locator('.node[data-qualified-name="default.sales_summary@' + WORKSPACE + '"]').wait_for(
                state="detached")
            assert sorted(rendered()) == sorted([f"{LAKE}/raw/orders.csv", f"{LAKE}/raw/customers.csv",
                                                 f"{WORKSPACE}/jobs/1/processes/join_orders",
                                                 f"default.sales@{WORKSPACE}"])
        finally:
            browser.close()
