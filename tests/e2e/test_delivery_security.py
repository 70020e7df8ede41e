"""Security of the intake: keys per function as in Azure, no secret in any log line, no internals in any answer.

One `ol2purview serve` (queue mode, embedded storage, its worker running) with a function key, a master key and a key
that belongs to `ingest_batch` only; everything it prints is captured and searched after the run.
"""

from __future__ import annotations

import json
import secrets
import socket
from typing import Iterator

import pytest
import requests

from tools.functions_host.launcher import ServeHandle, start_serve
from tools.samples.delivery import databricks_run, leaks

pytestmark = pytest.mark.e2e

KEY = "fn-" + secrets.token_urlsafe(24)
BATCH_ONLY_KEY = "batch-" + secrets.token_urlsafe(24)
BEARER = "eyJhbGciOiJub25lIn0." + secrets.token_urlsafe(32)
WRONG_KEYS = ("wrong-" + secrets.token_urlsafe(16), "guess-" + secrets.token_urlsafe(16))
EVENT = "/api/v1/lineage"
BATCH = "/api/v1/lineage/batch"
KEY_ERROR = {"error": "missing or wrong function key: send it in the x-functions-key header or as ?code="}
ADMIN_KEY_ERROR = {
    "error": "missing or wrong function key: this endpoint needs the master key, not a function key "
    "(printed by `ol2purview serve`, kept in host-keys.json in its data folder); send it in "
    "the x-functions-key header or as ?code="
}


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    handle = start_serve(
        tmp_path_factory.mktemp("security"), key=KEY, extra_args=("--function-key", f"ingest_batch={BATCH_ONLY_KEY}")
    )
    yield handle
    handle.stop()


def post(
    host: ServeHandle, route: str, body: object, headers: dict | None = None, params: dict | None = None
) -> requests.Response:
    return requests.post(
        host.url + route, data=json.dumps(body), headers=headers or {}, params=params or {}, timeout=30
    )


@pytest.mark.parametrize("route", [EVENT, BATCH])
@pytest.mark.parametrize(
    ("what", "headers", "params"),
    [
        ("no key", {}, {}),
        ("a wrong key in the header", {"x-functions-key": WRONG_KEYS[0]}, {}),
        ("a wrong key as ?code=", {}, {"code": WRONG_KEYS[1]}),
        ("the key as a bearer token", {"Authorization": f"Bearer {KEY}"}, {}),
    ],
)
def test_no_key_or_a_wrong_key_is_401_on_every_ingest_route(host, route, what, headers, params):
    event = databricks_run(7000)[0]
    response = post(host, route, [event] if route == BATCH else event, headers, params)
    assert (response.status_code, response.json()) == (401, KEY_ERROR), what


def test_a_key_of_another_function_is_401_and_works_where_it_belongs(host):
    event = databricks_run(7001)[0]
    refused = post(host, EVENT, event, {"x-functions-key": BATCH_ONLY_KEY})
    assert (refused.status_code, refused.json()) == (401, KEY_ERROR)
    accepted = post(host, BATCH, [event], {"x-functions-key": BATCH_ONLY_KEY})
    assert (accepted.status_code, accepted.content) == (204, b"")


def test_the_status_endpoint_needs_the_master_key(host):
    url = f"{host.url}/admin/ol2purview/status"
    for params in ({}, {"code": KEY}, {"code": BATCH_ONLY_KEY}, {"code": WRONG_KEYS[0]}):
        response = requests.get(url, params=params, timeout=10)
        assert (response.status_code, response.json()) == (401, ADMIN_KEY_ERROR), params
    assert requests.get(url, params={"code": host.master_key}, timeout=10).status_code == 200


def test_the_master_key_gets_the_queue_status(host):
    allowed = requests.get(f"{host.url}/admin/ol2purview/status", params={"code": host.master_key}, timeout=10)
    queue = allowed.json()["queues"]["lineage-events"]
    assert (allowed.status_code, queue["function"], queue["poisonQueue"]) == (
        200,
        "process_lineage_event",
        "lineage-events-poison",
    )


def test_a_malformed_http_request_is_400_and_the_host_stays_up(host):
    with socket.create_connection(("127.0.0.1", host.port), timeout=5) as sock:
        sock.sendall(b"NOT-HTTP \x00\x01 garbage\r\n\r\n")
        answer = sock.recv(4096)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert (head.split(b"\r\n")[0], body) == (b"HTTP/1.1 400 Bad Request", b"Invalid HTTP request received.")
    assert not leaks(answer.decode("utf-8", "replace"))
    assert requests.get(f"{host.url}/api/health", timeout=5).status_code == 200


def test_keys_and_bearer_tokens_never_appear_in_the_logs(host):
    """Keys travel in the query, in the header and as a bearer token, on accepted, refused, unknown and failing
    requests; the worker processes the accepted ones. After the banner (which prints the key for the developer, as
    `func start` does), no line of the host's output holds a key; wrong keys and bearer tokens appear nowhere."""
    good = databricks_run(7002)
    sent = [
        post(host, EVENT, good[0], params={"code": KEY}),
        post(host, EVENT, good[1], {"x-functions-key": KEY, "Authorization": f"Bearer {BEARER}"}),
        post(host, EVENT, {"eventType": "START"}, params={"code": KEY}),  # refused: 400
        post(host, EVENT, good[0], {"Authorization": f"Bearer {BEARER}"}),  # 401
        post(host, EVENT, good[0], {"x-functions-key": WRONG_KEYS[0]}),  # 401
        post(host, EVENT, good[0], params={"code": WRONG_KEYS[1]}),  # 401
        post(host, BATCH, [good[0], {"bad": True}], {"x-functions-key": BATCH_ONLY_KEY}),  # 200 partial
        post(host, "/api/no/such/route", good[0], params={"code": KEY}),  # 404
        requests.get(f"{host.url}/admin/ol2purview/status", params={"code": host.master_key}, timeout=10),
    ]
    assert [r.status_code for r in sent] == [200, 200, 400, 401, 401, 401, 200, 404, 200]
    for response in sent:
        for secret in (KEY, BATCH_ONLY_KEY, BEARER, *WRONG_KEYS, host.master_key):
            assert secret not in response.text
        assert not leaks(response.text), response.text
    host.wait_until_processed(timeout=60)
    output = host.output()
    after_banner = output.split("\nready:", 1)[1]
    assert "Executed 'ingest_event' (status 200" in after_banner  # the log does record the requests
    for secret in (KEY, BATCH_ONLY_KEY, host.master_key):
        assert secret not in after_banner
    for secret in (BEARER, *WRONG_KEYS):
        assert secret not in output
    assert "Traceback" not in output
