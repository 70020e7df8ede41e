"""Driving the lineage page in Chromium: open it, open a node's inputs, set the time window."""

from __future__ import annotations

from typing import Any, Iterator

from tests.support.chromium import CHROMIUM, CHROMIUM_ARGS


def open_browser(url: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport={"width": 1600, "height": 900}).new_page()
            page.errors = []  # type: ignore[attr-defined]
            page.on("pageerror", lambda error: page.errors.append(str(error)))  # type: ignore[attr-defined]
            requests_seen: list[str] = []
            page.on("request", lambda r: requests_seen.append(r.url + " " + str(r.headers)))
            page.requests_seen = requests_seen  # type: ignore[attr-defined]
            page.goto(url + "/")
            yield page
            assert page.errors == []  # type: ignore[attr-defined]
        finally:
            browser.close()


def open_inputs_of(page: Any, search: str, qualified_name: str) -> None:
    """Search `search`, open the dataset `qualified_name` and show its inputs, one level deep."""
    page.locator('#time-window[data-available="true"]').wait_for(state="attached")
    page.fill("#search-input", search)
    page.click("#search-button")
    page.locator(f'.result[data-qualified-name="{qualified_name}"] > .name').click()
    page.locator(f'.node.base[data-qualified-name="{qualified_name}"]').wait_for()
    page.select_option("#direction", "INPUT")
    page.select_option("#depth", "1")


def set_window(page: Any, since: str, until: str) -> None:
    page.fill("#window-since", since[:-1])  # datetime-local, read as UTC
    page.fill("#window-until", until[:-1])
    page.click("#window-apply")
    page.locator("#status", has_text=f"from {since[:-1]}.000Z").wait_for()
