"""The lineage page's time window labels a resource set by its folder, as Purview shows it, not `{SparkPartitions}`
(issue 36, point 5): the catalog server adds each dataset's display name to the run history's answer. The serve it
asks is a loopback stub here (the boundary); tests/e2e/test_history_page.py drives the whole page."""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tools.catalog.history_link import HistoryLink
from tools.functions_host.state import RunningHost

# The qualifiedNames Purview's ADLS scanner gives a Spark output folder's resource set and a single file
# (Learn, "Understanding resource sets": `name-of-spark-output/{SparkPartitions}` is named "name of spark output").
RESOURCE_SET = "https://contosolake.dfs.core.windows.net/silver/daily-orders/{SparkPartitions}"
PARTITIONED = "https://contosolake.dfs.core.windows.net/silver/sales/Year={Year}/Month={Month}/{SparkPartitions}"
FILE = "https://contosolake.dfs.core.windows.net/silver/readme.md"
ANSWER = {
    "qualifiedName": RESOURCE_SET,
    "datasets": [
        {"qualifiedName": q, "typeName": t, "distance": 0}
        for q, t in (
            (RESOURCE_SET, "azure_datalake_gen2_resource_set"),
            (PARTITIONED, "azure_datalake_gen2_resource_set"),
            (FILE, "azure_datalake_gen2_path"),
        )
    ],
    "processes": [],
    "edges": [],
}


class History(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        body = json.dumps(ANSWER).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args) -> None:
        pass


def test_datasets_of_a_window_carry_the_name_purview_shows(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), History)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        RunningHost(
            pid=os.getpid(),
            url=f"http://127.0.0.1:{server.server_address[1]}",
            data_dir=str(tmp_path),
            storage_mode="embedded",
            storage_connection=None,
            atlas_url=None,
            catalog_page=None,
            azurite_pid=None,
            azurite_location=None,
            started_at=0.0,
        ).write()
        status, body = HistoryLink(tmp_path, key="k").lineage({"qualifiedName": RESOURCE_SET})
    finally:
        server.shutdown()
    assert status == 200
    assert [(d["qualifiedName"], d["name"]) for d in body["datasets"]] == [
        (RESOURCE_SET, "daily orders"),
        (PARTITIONED, "sales"),
        (FILE, "readme.md"),
    ]
