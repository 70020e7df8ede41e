"""Reading the embedded catalog's HTTP answers in tests: a success's body, and a refusal as (status, code, message)."""

from __future__ import annotations

from typing import Any

import requests


def ok(response: requests.Response) -> Any:
    """The body of a 200 or 204 (None when empty); any other status fails with the answer's text."""
    assert response.status_code in (200, 204), response.text
    return response.json() if response.content else None


def error(response: requests.Response) -> tuple[int, str, str]:
    """(status, errorCode, errorMessage) of an Atlas error answer."""
    body = response.json()
    return response.status_code, body["errorCode"], body["errorMessage"]


def errors(answers: dict[str, requests.Response]) -> dict[str, tuple[int, str, str]]:
    """Each named answer as `error` reads it."""
    return {why: error(answer) for why, answer in answers.items()}
