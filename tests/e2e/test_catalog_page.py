"""The lineage page in a real headless Chromium, on catalog data the real pipeline wrote from events: the shared
compat-tests CLL sequence and a bronze -> silver -> gold chain of our own. Search (columns grouped under their
dataset), the graph (full names, placeholders), a process's last run and column lineage detail, expanding a dataset
to its columns and tracing a gold column upstream through both hops, zoom and fit, odd attribute types, and the call
counter left untouched by the page. `UPDATE_SCREENSHOT=1` rewrites the screenshots in docs/."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests

from tests.catalog_server.builders import BLOB, blob, process
from tests.catalog_server.pipeline_data import (
    BRONZE,
    CLL_SEQUENCE,
    CUSTOMERS,
    GOLD,
    SILVER,
    medallion_events,
    sequence_events,
    write_through_pipeline,
)
from tests.support.atlas_answers import ok
from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS
from tools.catalog import CatalogServer

DOCS = Path(__file__).resolve().parents[2] / "docs"
USER, PASSWORD = "viewer", "page-pw"
CLL_OUTPUT = "file:/tmp/cll_test/default.tbl1"
CLL_SOURCES = ("file:/tmp/cll_test/default.cll_source1", "file:/tmp/cll_test/default.cll_source2")

pytestmark = pytest.mark.browser

if not (os.path.exists(CHROMIUM) or shutil.which("chromium")) and not os.environ.get("CI"):
    pytest.skip("chromium is not installed (required in CI)", allow_module_level=True)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CatalogServer]:
    folder = tmp_path_factory.mktemp("page")
    server = CatalogServer(folder / "page.sqlite", user=USER, password=PASSWORD).start()
    atlas_url = server.atlas_url.replace("://", f"://{USER}:{PASSWORD}@")
    write_through_pipeline(atlas_url, folder, sequence_events(CLL_SEQUENCE))
    write_through_pipeline(atlas_url, folder, medallion_events())
    yield server
    server.stop()


@pytest.fixture
def browser_page(catalog: CatalogServer) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(
                viewport={"width": 1500, "height": 860}, http_credentials={"username": USER, "password": PASSWORD}
            )
            page = context.new_page()
            page.errors = []  # type: ignore[attr-defined]
            page.on("pageerror", lambda error: page.errors.append(str(error)))  # type: ignore[attr-defined]
            page.goto(catalog.url + "/")
            yield page
            assert page.errors == []  # type: ignore[attr-defined]
        finally:
            browser.close()


def search(page: Any, text: str) -> None:
    page.fill("#search-input", text)
    page.click("#search-button")
    page.locator("#status", has_text="match(es)").wait_for()


def open_dataset(page: Any, qualified_name: str) -> None:
    page.locator(f'.result[data-qualified-name="{qualified_name}"] > .name').click()
    page.locator(f'.node.base[data-qualified-name="{qualified_name}"]').wait_for()


def nodes(page: Any) -> dict[str, str]:
    found = page.locator("#graph .node")
    return {
        found.nth(i).get_attribute("data-qualified-name"): found.nth(i).get_attribute("class")
        for i in range(found.count())
    }


def rows(page: Any, selector: str) -> list[list[str]]:
    return [[cell.strip() for cell in row.split("\t")] for row in page.locator(selector).all_inner_texts()]


def shoot(page: Any, name: str) -> None:
    if os.environ.get("UPDATE_SCREENSHOT") == "1":
        page.screenshot(path=str(DOCS / name))


def test_cll_sample_search_graph_placeholders_and_process_details(browser_page: Any) -> None:
    page = browser_page
    search(page, "tbl1")
    group = page.locator(f'.result-group[data-qualified-name="{CLL_OUTPUT}"]')
    assert group.locator(".result .type").inner_text() == "openlineage_dataset · placeholder"
    assert group.locator(".result-column").all_inner_texts() == ["⋮ agg", "⋮ ident", "⋮ trans"]  # grouped under it
    open_dataset(page, CLL_OUTPUT)
    classes = nodes(page)
    datasets = {qn: c for qn, c in classes.items() if "dataset" in c}
    assert datasets == {
        CLL_OUTPUT: "node dataset base placeholder selected",
        CLL_SOURCES[0]: "node dataset placeholder",
        CLL_SOURCES[1]: "node dataset placeholder",
    }
    assert sorted(c for qn, c in classes.items() if qn not in datasets) == ["node process"] * 3
    labels = [" ".join(t.split()) for t in page.locator("#graph .node .label").all_text_contents()]
    assert len(set(labels)) == len(labels) == 6  # full names, wrapped, none alike
    assert "execute_create_hive_table_as_select_command.default_tbl1" in [label.replace(" ", "") for label in labels]
    assert page.locator("#placeholder-notice").inner_text() == (
        'Placeholder: no name-mapping rule matched OpenLineage namespace "file:/tmp/cll_test", name "default.tbl1", '
        "so ol2purview wrote this dataset itself instead of linking a scanned asset. Add a rule to "
        "config/OlToPurviewMappings.json (try it with qn-tester --explain)."
    )

    page.locator(".node.process", has_text="default_tbl1").click()
    page.locator(".column-lineage-detail-row").first.wait_for()
    assert page.locator("#placeholder-notice").inner_text() == ""
    assert page.locator('#details-summary dd[data-field="Collection"]').inner_text() == "ol2purview"  # the root
    assert [page.locator(f'.last-run dd[data-field="{f}"]').inner_text() for f in ("Status", "User", "Duration")] == [
        "COMPLETE",
        "(unknown)",
        "0.6 s",
    ]  # lastRunDurationMs: START 13:26:53.776, COMPLETE 13:26:54.34
    assert page.locator('.last-run dd[data-field="Ended"]').inner_text().startswith("2024-08-06T13:26:")
    source1, source2 = CLL_SOURCES
    assert rows(page, ".column-lineage-detail-row") == [
        ["agg", source1, "a", "INDIRECT FILTER, INDIRECT GROUP_BY, INDIRECT JOIN"],
        ["agg", source1, "b", "INDIRECT GROUP_BY"],
        ["agg", source2, "a", "INDIRECT FILTER, INDIRECT JOIN"],
        ["agg", source2, "c", "AGGREGATION"],
        ["ident", source1, "a", "IDENTITY, INDIRECT FILTER, INDIRECT GROUP_BY, INDIRECT JOIN"],  # direct first
        ["ident", source1, "b", "INDIRECT GROUP_BY"],
        ["ident", source2, "a", "INDIRECT FILTER, INDIRECT JOIN"],
        ["trans", source1, "a", "INDIRECT FILTER, INDIRECT GROUP_BY, INDIRECT JOIN"],
        ["trans", source1, "b", "TRANSFORMATION, INDIRECT GROUP_BY"],
        ["trans", source2, "a", "INDIRECT FILTER, INDIRECT JOIN"],
    ]
    assert rows(page, ".column-mapping-row") == [
        [source1, CLL_OUTPUT, "a", "ident"],
        [source1, CLL_OUTPUT, "b", "trans"],
        [source2, CLL_OUTPUT, "c", "agg"],
    ]
    shoot(page, "lineage-page.png")


def test_trace_a_gold_column_upstream_through_both_hops(browser_page: Any) -> None:
    page = browser_page
    search(page, "sales_by_country")
    open_dataset(page, GOLD)
    page.locator(f'.node.base[data-qualified-name="{GOLD}"] .column-toggle').click()
    base_rows = page.locator(".node.base .column-row")
    base_rows.first.wait_for()
    assert [base_rows.nth(i).get_attribute("data-column") for i in range(base_rows.count())] == [
        "country",
        "total_amount",
    ]
    assert base_rows.first.get_attribute("class") == "column-row lineage-only"  # no schema: known from column lineage
    page.locator('.node.base .column-row[data-column="total_amount"]').click()
    page.locator(".column-edge").first.wait_for(state="attached")
    assert page.locator("#graph-title").inner_text() == "Column lineage of total_amount in sales_by_country"
    boxes = page.locator(".col-dataset")
    shown = {
        boxes.nth(i).get_attribute("data-qualified-name"): (
            boxes.nth(i).get_attribute("class"),
            boxes.nth(i).locator(".column-row").all_text_contents(),
        )
        for i in range(boxes.count())
    }
    assert shown == {
        BRONZE: ("col-dataset", ["amount", "customer_id", "status"]),
        SILVER: ("col-dataset", ["amount", "customer_id"]),
        CUSTOMERS: ("col-dataset indirect-only", ["country", "customer_id"]),
        GOLD: ("col-dataset root", ["total_amount"]),
    }
    edges = page.locator("path.column-edge")
    drawn = sorted(
        (
            edges.nth(i).get_attribute("data-from"),
            edges.nth(i).get_attribute("data-to"),
            edges.nth(i).get_attribute("data-label"),
            edges.nth(i).get_attribute("class"),
        )
        for i in range(edges.count())
    )
    assert drawn == sorted(
        [
            (f"{SILVER}.amount", f"{GOLD}.total_amount", "AGGREGATION", "column-edge"),
            (f"{SILVER}.customer_id", f"{GOLD}.total_amount", "INDIRECT JOIN", "column-edge indirect"),
            (f"{CUSTOMERS}.customer_id", f"{GOLD}.total_amount", "INDIRECT JOIN", "column-edge indirect"),
            (f"{CUSTOMERS}.country", f"{GOLD}.total_amount", "INDIRECT GROUP_BY", "column-edge indirect"),
            (f"{BRONZE}.amount", f"{SILVER}.amount", "IDENTITY", "column-edge"),
            (f"{BRONZE}.customer_id", f"{SILVER}.customer_id", "IDENTITY", "column-edge"),
            (
                f"{BRONZE}.status",
                f"{SILVER}.amount",
                "INDIRECT FILTER (whole dataset)",
                "column-edge indirect dataset-level",
            ),
            (
                f"{BRONZE}.status",
                f"{SILVER}.customer_id",
                "INDIRECT FILTER (whole dataset)",
                "column-edge indirect dataset-level",
            ),
        ]
    )
    assert page.locator("#status").inner_text() == (
        "7 related column(s), 8 edge(s) across 2 process(es); 1 dataset(s) influence it only indirectly."
    )
    shoot(page, "column-lineage.png")

    before = page.locator("#graph svg").get_attribute("viewBox")
    page.click("#zoom-in")
    zoomed = page.locator("#graph svg").get_attribute("viewBox")
    assert float(zoomed.split()[2]) == pytest.approx(float(before.split()[2]) / 1.25)
    page.click("#zoom-fit")
    assert page.locator("#graph svg").get_attribute("viewBox") == before

    page.locator(f'.column-row[data-dataset="{SILVER}"][data-column="amount"]').click()  # re-trace from silver
    page.locator("#graph-title", has_text="Column lineage of amount in orders").wait_for()
    page.select_option("#direction", "OUTPUT")  # the same column, downstream only: gold's sum is the only reader
    page.locator("#status", has_text="1 related column(s), 1 edge(s) across 1 process(es).").wait_for()
    assert sorted(page.locator(".col-dataset").evaluate_all("boxes => boxes.map(b => b.dataset.qualifiedName)")) == [
        GOLD,
        SILVER,
    ]
    page.click("#back-to-lineage")
    page.locator(f'.node.base[data-qualified-name="{GOLD}"]').wait_for()


def test_odd_attribute_types_and_the_call_counter(browser_page: Any, catalog: CatalogServer) -> None:
    page = browser_page
    auth = (USER, PASSWORD)
    requests.post(
        f"{catalog.atlas_url}/entity/bulk",
        auth=auth,
        timeout=10,
        json={
            "entities": [
                {
                    "typeName": "hive_table",
                    "guid": "-1",
                    "attributes": {
                        "qualifiedName": "default.odd@h",
                        "name": 12345,
                        "description": {"not": ["a", "string"]},
                        "comment": None,
                        "temporary": True,
                    },
                }
            ]
        },
    ).raise_for_status()
    requests.post(f"{catalog.url}/_ol2purview/calls/reset", auth=auth, timeout=10).raise_for_status()
    search(page, "odd")
    result = page.locator('.result[data-qualified-name="default.odd@h"]')
    assert result.locator(".name").inner_text() == "12345"  # a name that is not text is shown as its JSON
    result.locator(".name").click()
    page.locator('.node.base[data-qualified-name="default.odd@h"]').wait_for()
    page.locator("#details-attributes").locator("text=temporary").wait_for()
    attributes = dict(tuple(r) for r in rows(page, "#details-attributes tr"))
    assert attributes == {"name": "12345", "description": '{"not":["a","string"]}', "comment": "", "temporary": "true"}
    calls = requests.get(f"{catalog.url}/_ol2purview/calls", auth=auth, timeout=10).json()
    assert calls == {"total": 0, "byRoute": {}}  # the page's own calls are not catalog calls


GOVERNED = BLOB  # where tests/catalog_server/builders.py blob() puts a file


def governed_lineage(catalog: CatalogServer) -> dict[str, str]:
    """raw.csv -> copy -> clean.csv written through the Atlas API, then governed as a user would: CONTOSO.PII (level 3)
    on raw.csv, which Atlas propagates to copy and clean.csv; CONTOSO.FINANCE and two labels on clean.csv; the term
    Revenue of the glossary Finance assigned to clean.csv. Name -> guid."""
    atlas, auth = catalog.atlas_url, (USER, PASSWORD)
    classification_defs = [{"name": "CONTOSO.PII", "attributeDefs": [{"name": "level", "typeName": "int"}]}]
    classification_defs.append({"name": "CONTOSO.FINANCE", "attributeDefs": []})
    ok(
        requests.post(
            f"{atlas}/types/typedefs", auth=auth, timeout=10, json={"classificationDefs": classification_defs}
        )
    )
    entities = [blob("-raw", "raw.csv"), blob("-clean", "clean.csv")]
    entities.append(process("-copy", "copy", [{"guid": "-raw"}], [{"guid": "-clean"}]))
    assigned = ok(requests.post(f"{atlas}/entity/bulk", auth=auth, timeout=10, json={"entities": entities}))
    g = {placeholder[1:]: guid for placeholder, guid in assigned["guidAssignments"].items()}
    pii = [{"typeName": "CONTOSO.PII", "attributes": {"level": 3}}]
    ok(requests.post(f"{atlas}/entity/guid/{g['raw']}/classifications", auth=auth, timeout=10, json=pii))
    finance = [{"typeName": "CONTOSO.FINANCE"}]
    ok(requests.post(f"{atlas}/entity/guid/{g['clean']}/classifications", auth=auth, timeout=10, json=finance))
    ok(requests.post(f"{atlas}/entity/guid/{g['clean']}/labels", auth=auth, timeout=10, json=["gold", "Example.Label"]))
    glossary = ok(requests.post(f"{atlas}/glossary", auth=auth, timeout=10, json={"name": "Finance"}))
    term = {"name": "Revenue", "anchor": {"glossaryGuid": glossary["guid"]}}
    term_guid = ok(requests.post(f"{atlas}/glossary/term", auth=auth, timeout=10, json=term))["guid"]
    assignment = [{"guid": g["clean"]}]
    ok(requests.post(f"{atlas}/glossary/terms/{term_guid}/assignedEntities", auth=auth, timeout=10, json=assignment))
    return {**g, "Revenue": term_guid}


GOVERNANCE = """() => [...document.querySelectorAll('#governance > *')].map((part) => part.tagName === 'H3'
  ? part.textContent : [...part.children].map((item) => [item.className, item.textContent]))"""


def test_an_entitys_classifications_labels_and_glossary_terms(browser_page: Any, catalog: CatalogServer) -> None:
    page = browser_page
    g = governed_lineage(catalog)
    search(page, "clean.csv")
    open_dataset(page, f"{GOVERNED}/clean.csv")
    page.locator(f'#details-panel[data-guid="{g["clean"]}"] #governance .term').wait_for()
    assert page.evaluate(GOVERNANCE) == [
        "Classifications",
        [
            ["classification", "CONTOSO.FINANCE"],
            ["classification propagated", "CONTOSO.PII (level=3) · propagated from raw.csv"],
        ],
        "Labels",
        [["label-chip", "gold"], ["label-chip", "Example.Label"]],
        "Glossary terms",
        [["term", "Revenue · Finance"]],
    ]
    assert page.locator("#governance .term").get_attribute("data-term-guid") == g["Revenue"]

    page.locator(".node.process", has_text="copy").click()  # the process reads raw.csv: PII reaches it
    page.locator(f'#details-panel[data-guid="{g["copy"]}"] #governance .classification').wait_for()
    assert page.evaluate(GOVERNANCE) == [
        "Classifications",
        [["classification propagated", "CONTOSO.PII (level=3) · propagated from raw.csv"]],
    ]
    page.locator(f'.node.dataset[data-qualified-name="{GOVERNED}/raw.csv"]').click()  # where PII is its own
    page.locator(f'#details-panel[data-guid="{g["raw"]}"] #governance .classification').wait_for()
    assert page.evaluate(GOVERNANCE) == ["Classifications", [["classification", "CONTOSO.PII (level=3)"]]]

    # governance changes are read again when the details are: PII removed at its source leaves every entity
    requests.delete(
        f"{catalog.atlas_url}/entity/guid/{g['raw']}/classification/CONTOSO.PII", auth=(USER, PASSWORD), timeout=10
    ).raise_for_status()
    page.locator(f'.node.dataset[data-qualified-name="{GOVERNED}/clean.csv"]').click()
    page.locator(f'#details-panel[data-guid="{g["clean"]}"] #governance .term').wait_for()
    assert page.evaluate(GOVERNANCE)[1] == [["classification", "CONTOSO.FINANCE"]]
    page.locator(f'.node.dataset[data-qualified-name="{GOVERNED}/raw.csv"]').click()
    page.locator(f'#details-panel[data-guid="{g["raw"]}"]').wait_for()
    page.locator("#details-summary dd[data-field='guid']", has_text=g["raw"]).wait_for()
    assert page.evaluate(GOVERNANCE) == []  # nothing governs it: no empty headings


# --- the page at common screen sizes (#23 item 7) --------------------------------------------------------------------
SCREENS = [(1400, 900), (1920, 1080)]
SMALLEST_TEXT_PX = """() => {
  const svg = document.querySelector('#graph svg'), scale = svg.getScreenCTM().a;
  return Math.min(...[...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale));
}"""
FILLED = """(selector) => {
  const panel = document.querySelector('#graph').getBoundingClientRect();
  const boxes = [...document.querySelectorAll(selector)].map((n) => n.getBoundingClientRect());
  const left = Math.max(panel.left, Math.min(...boxes.map((b) => b.left)));
  const right = Math.min(panel.right, Math.max(...boxes.map((b) => b.right)));
  const top = Math.max(panel.top, Math.min(...boxes.map((b) => b.top)));
  const bottom = Math.min(panel.bottom, Math.max(...boxes.map((b) => b.bottom)));
  return [(right - left) / panel.width, (bottom - top) / panel.height];
}"""
INSIDE_PANEL = """(selector) => {
  const panel = document.querySelector('#graph').getBoundingClientRect(), box = document.querySelector(selector).getBoundingClientRect();
  return box.left >= panel.left && box.right <= panel.right && box.top >= panel.top && box.bottom <= panel.bottom;
}"""
RECT_STYLE = """(selector) => {
  const style = getComputedStyle(document.querySelector(selector));
  return [style.fill, style.stroke, style.strokeDasharray];
}"""
GREY_DASHED = ["rgb(244, 244, 244)", "rgb(138, 143, 150)", "6px, 3px"]
FITTED = """() => {
  const svg = document.querySelector('#graph svg'), box = document.querySelector('#graph').getBoundingClientRect();
  return Boolean(svg) && svg.dataset.panel === `${Math.round(box.width)}x${Math.round(box.height)}`;
}"""


def settled(page: Any) -> None:
    """Wait until the details panel is open and the graph was fitted to the panel's final size."""
    page.locator("#details-panel:not([hidden])").wait_for()
    page.wait_for_function(FITTED)


@pytest.fixture(params=SCREENS, ids=[f"{w}x{h}" for w, h in SCREENS])
def sized_page(request: pytest.FixtureRequest, catalog: CatalogServer) -> Iterator[Any]:
    """The page in a window of each common size; every response it gets is recorded (no 404s, the favicon too)."""
    from playwright.sync_api import sync_playwright

    width, height = request.param
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(
                viewport={"width": width, "height": height}, http_credentials={"username": USER, "password": PASSWORD}
            )
            page = context.new_page()
            page.errors, page.failed = [], []  # type: ignore[attr-defined]
            page.on("pageerror", lambda error: page.errors.append(str(error)))  # type: ignore[attr-defined]
            page.on("response", lambda r: page.failed.append((r.status, r.url)) if r.status >= 400 else None)  # type: ignore[attr-defined]
            page.size = f"{width}x{height}"  # type: ignore[attr-defined]
            page.goto(catalog.url + "/")
            page.wait_for_load_state("networkidle")
            yield page
            assert page.errors == []  # type: ignore[attr-defined]
            assert page.failed == []  # type: ignore[attr-defined]
        finally:
            browser.close()


def test_the_graph_fills_its_panel_with_readable_text(sized_page: Any) -> None:
    page = sized_page
    search(page, "tbl1")
    open_dataset(page, CLL_OUTPUT)
    settled(page)
    assert page.evaluate(SMALLEST_TEXT_PX) >= 12
    assert max(page.evaluate(FILLED, "#graph .node")) >= 0.85  # the nodes span the panel's width or height
    assert page.evaluate(INSIDE_PANEL, f'.node.base[data-qualified-name="{CLL_OUTPUT}"]')
    assert page.evaluate(RECT_STYLE, f'.node.placeholder[data-qualified-name="{CLL_OUTPUT}"] rect') == GREY_DASHED
    shoot(page, f"lineage-page-{page.size}.png")

    page.click("#zoom-out")  # a zoom the user asks for may go below the readable size; Fit comes back to it
    page.click("#zoom-fit")
    assert page.evaluate(SMALLEST_TEXT_PX) >= 12


def test_a_process_shows_last_run_once_and_no_empty_mapping_table(sized_page: Any) -> None:
    page = sized_page
    search(page, "tbl1")
    open_dataset(page, CLL_OUTPUT)
    page.locator(".node.process", has_text="default_tbl1").click()  # the CTAS: inputs, column lineage
    page.locator(".column-mapping-row").first.wait_for()
    assert page.locator("#details-panel").get_by_text("Last run", exact=True).count() == 1
    assert [page.locator(".last-run dt").nth(i).inner_text() for i in range(5)] == [
        "Ended",
        "Status",
        "User",
        "Run id",
        "Duration",
    ]
    without_inputs = page.evaluate("""() => [...document.querySelectorAll('#graph .node.process')]
        .filter((n) => !document.querySelector(`#graph path.edge[data-to="${n.dataset.guid}"]`))
        .map((n) => n.dataset.guid)""")
    assert len(without_inputs) == 2  # the two statements that created the sources from literals
    for guid in without_inputs:
        page.locator(f'.node.process[data-guid="{guid}"]').click()
        page.locator(f'#details-panel[data-guid="{guid}"] .last-run').wait_for()
        assert page.locator("#column-mapping").evaluate("box => box.children.length") == 0
        assert page.locator("#details-panel h3", has_text="Column mappings").count() == 0
        assert page.locator("#details-panel").get_by_text("Last run", exact=True).count() == 1


def test_a_click_anywhere_on_a_result_opens_the_dataset_and_a_column_button_traces_the_column(sized_page: Any) -> None:
    page = sized_page
    search(page, "tbl1")
    result = page.locator(f'.result[data-qualified-name="{CLL_OUTPUT}"]')
    group = page.locator(f'.result-group[data-qualified-name="{CLL_OUTPUT}"]')
    for target, (fx, fy) in [(group, (0.5, 0.5)), (result, (0.5, 0.5)), (result, (0.03, 0.92)), (result, (0.97, 0.08))]:
        page.evaluate(
            "() => { document.querySelector('#graph').replaceChildren(); "
            "document.querySelector('#graph-title').textContent = ''; }"
        )
        box = target.bounding_box()
        page.mouse.click(box["x"] + box["width"] * fx, box["y"] + box["height"] * fy)
        # the title is set as the click's lineage is drawn; a redraw of the old graph (the panel resizing it) may
        # bring the node back before that, so the wait is on both
        page.wait_for_function(
            "([title, name]) => document.querySelector('#graph-title').textContent === title"
            " && document.querySelector(`.node.base[data-qualified-name=\"${name}\"]`) !== null",
            arg=["Lineage of default.tbl1", CLL_OUTPUT],
        )
        settled(page)  # nothing of this click is still drawing when the next one starts
    group.locator('.result-column[data-column="agg"]').click()
    page.locator("#graph-title", has_text="Column lineage of agg in default.tbl1").wait_for()
    page.locator(".col-dataset").first.wait_for()
    settled(page)
    placeholders = page.locator(".col-dataset.placeholder")
    assert sorted(placeholders.nth(i).get_attribute("data-qualified-name") for i in range(placeholders.count())) == [
        *CLL_SOURCES,
        CLL_OUTPUT,
    ]  # every dataset of the CLL sample is a placeholder
    assert (
        page.evaluate(RECT_STYLE, f'.col-dataset.placeholder[data-qualified-name="{CLL_SOURCES[0]}"] rect')
        == GREY_DASHED
    )  # as in the dataset view
    assert page.evaluate(SMALLEST_TEXT_PX) >= 12
    assert page.evaluate(INSIDE_PANEL, f'.col-dataset.root[data-qualified-name="{CLL_OUTPUT}"]')
    shoot(page, f"column-lineage-{page.size}.png")


def test_the_favicon_is_served(sized_page: Any, catalog: CatalogServer) -> None:
    assert (
        sized_page.evaluate("() => document.querySelector('link[rel=icon]').href")
        == f"{catalog.url}/static/favicon.svg"
    )
    for path in ("/favicon.ico", "/static/favicon.svg"):
        response = requests.get(catalog.url + path, auth=(USER, PASSWORD), timeout=10)
        assert (response.status_code, response.headers["content-type"]) == (200, "image/svg+xml"), path
        assert response.text.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
