"""The lineage page's way to the run history: the catalog server asks the running `ol2purview serve`'s history
endpoints itself, with the function key, so that no key ever reaches the browser.

The host is found at each request (a `serve` started or stopped after the catalog is noticed): the one recorded as
running on the data folder (tools/functions_host/state.py), with the key given (the catalog that `serve` starts in its
own process knows serve's key) or the one kept in that folder. Answers are passed through; a host that does not run
or does not answer is a 503 that says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import quote

import requests

from olparser.resolution.resource_sets import display_name

from ..functions_host.state import RunningHost, kept_function_key

LINEAGE_PATH = "/api/ol2purview/lineage"
RUNS_PATH = "/api/ol2purview/runs/"
FORWARDED = ("qualifiedName", "since", "until", "direction", "depth", "column")
NO_HOST = (
    "the time window needs a running `ol2purview serve` on {data}: its run history answers it (start "
    "`ol2purview serve`, or open the page it prints)"
)


@dataclass(frozen=True)
class HistoryLink:
    data_dir: Path
    key: str | None = None  # the function key, when the catalog runs inside serve (else the kept one)
    timeout: float = 30.0

    def host(self) -> tuple[str, str | None] | None:
        """(base URL, function key) of the running serve, or None."""
        running = RunningHost.find(self.data_dir)
        if running is None:
            return None
        return running.url.rstrip("/"), self.key or kept_function_key(running.url, self.data_dir)

    def status(self) -> dict[str, Any]:
        host = self.host()
        return {"available": host is not None, "reason": None if host else NO_HOST.format(data=self.data_dir)}

    def lineage(self, params: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
        """The run history's answer, each dataset with the `name` Purview shows for it (a resource set's folder name,
        not `{SparkPartitions}`), which the page labels its nodes with."""
        status, body = self._get(LINEAGE_PATH, {k: v for k, v in params.items() if k in FORWARDED})
        if status == 200:
            for dataset in body.get("datasets") or []:
                if isinstance(dataset, dict) and isinstance(dataset.get("qualifiedName"), str):
                    dataset["name"] = display_name(dataset["qualifiedName"])
        return status, body

    def run(self, run_id: str) -> tuple[int, dict[str, Any]]:
        return self._get(RUNS_PATH + quote(run_id, safe=""), {})

    def _get(self, path: str, params: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
        """The host's answer (status, JSON); its errors as the page reads errors: {"errorMessage"}."""
        host = self.host()
        if host is None:
            return 503, _error(NO_HOST.format(data=self.data_dir))
        url, key = host
        try:
            response = requests.get(
                url + path, params=params, headers={"x-functions-key": key} if key else {}, timeout=self.timeout
            )
            body = response.json()
        except (requests.RequestException, ValueError) as exc:
            return 503, _error(f"the local ol2purview serve at {url} did not answer ({type(exc).__name__})")
        if response.status_code == 200:
            return 200, body
        message = body.get("error") if isinstance(body, dict) else None
        where = f" ({body['path']})" if isinstance(body, dict) and body.get("path") else ""
        return response.status_code, _error(f"{message or 'the run history refused the request'}{where}")


def _error(message: str) -> dict[str, Any]:
    return {"errorCode": "OL2PURVIEW-HISTORY", "errorMessage": message}
