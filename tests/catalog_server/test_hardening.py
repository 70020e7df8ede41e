"""The catalog on the user's machine: Host and Origin checks, JSON-only writes, auth on every route, Atlas JSON for
every error (404, 405, 401), trailing slashes, owner-only files, the page's traffic left out of the call counter,
the password from the environment."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import requests

from tests.support.catalog_server import PASSWORD, USER
from tools.catalog import CatalogServer

AUTH = (USER, PASSWORD)
ENTITY = {
    "entities": [{"typeName": "hive_table", "guid": "-1", "attributes": {"qualifiedName": "default.t@h", "name": "t"}}]
}


def test_host_must_be_loopback_unless_allowed(db_path: Path) -> None:
    with CatalogServer(db_path, allowed_hosts=["catalog.internal"]) as server:
        types = f"{server.atlas_url}/types/typedefs/headers"
        rebound = requests.get(types, headers={"Host": "attacker.example:21000"}, timeout=10)
        assert (rebound.status_code, rebound.json()) == (
            403,
            {
                "errorCode": "ATLAS-403-00-001",
                "errorMessage": "Host 'attacker.example' is not allowed: this catalog answers loopback names only (start "
                "it with --allow-host NAME to allow another)",
            },
        )
        for host in ("localhost:21000", "127.0.0.1", "[::1]:8080", "127.5.6.7:1", "catalog.internal:21000"):
            assert requests.get(types, headers={"Host": host}, timeout=10).status_code == 200, host
        page = requests.get(server.url + "/", headers={"Host": "evil.test"}, timeout=10)
        assert page.status_code == 403


def test_cross_origin_writes_are_refused_same_origin_ones_pass(catalog: CatalogServer) -> None:
    bulk = f"{catalog.atlas_url}/entity/bulk"
    cross = requests.post(bulk, json=ENTITY, auth=AUTH, headers={"Origin": "https://evil.example"}, timeout=10)
    assert (cross.status_code, cross.json()) == (
        403,
        {
            "errorCode": "ATLAS-403-00-001",
            "errorMessage": "cross-origin POST refused: Origin 'https://evil.example' is not this catalog",
        },
    )
    opaque = requests.delete(f"{bulk}?guid=x", auth=AUTH, headers={"Origin": "null"}, timeout=10)
    assert opaque.status_code == 403
    fetch_metadata = requests.post(bulk, json=ENTITY, auth=AUTH, headers={"Sec-Fetch-Site": "cross-site"}, timeout=10)
    assert fetch_metadata.json()["errorMessage"] == "cross-site POST refused"
    same = requests.post(bulk, json=ENTITY, auth=AUTH, headers={"Origin": catalog.url}, timeout=10)
    assert same.status_code == 200
    other_port = requests.post(bulk, json=ENTITY, auth=AUTH, headers={"Origin": "http://127.0.0.1:7071"}, timeout=10)
    assert (
        other_port.json()["errorMessage"] == "cross-origin POST refused: Origin 'http://127.0.0.1:7071' is not "
        "this catalog"
    )  # another local web app is another origin
    faults = requests.put(
        f"{catalog.url}/_ol2purview/faults",
        data="down",
        auth=AUTH,
        headers={"Origin": "http://evil.example"},
        timeout=10,
    )
    assert faults.status_code == 403
    read = requests.get(
        f"{catalog.atlas_url}/types/typedefs/headers", auth=AUTH, headers={"Origin": "https://evil.example"}, timeout=10
    )
    assert read.status_code == 200  # a cross-origin read gets no CORS header, so the page cannot see it


def test_writes_must_be_json(catalog: CatalogServer) -> None:
    bulk = f"{catalog.atlas_url}/entity/bulk"
    as_text = requests.post(
        bulk, data='{"entities": []}', auth=AUTH, headers={"Content-Type": "text/plain"}, timeout=10
    )
    assert (as_text.status_code, as_text.json()) == (
        415,
        {
            "errorCode": "ATLAS-400-00-029",
            "errorMessage": "the request body must be JSON (Content-Type: application/json), got text/plain",
        },
    )
    as_form = requests.post(bulk, data={"entities": "x"}, auth=AUTH, timeout=10)
    assert as_form.json()["errorMessage"].endswith("got application/x-www-form-urlencoded")
    untyped = requests.post(bulk, data=b'{"entities": []}', auth=AUTH, timeout=10)
    assert untyped.json()["errorMessage"].endswith("got no Content-Type")
    typed = requests.post(
        bulk,
        data=b'{"entities": []}',
        auth=AUTH,
        headers={"Content-Type": "application/json; charset=utf-8"},
        timeout=10,
    )
    assert (typed.status_code, typed.json()) == (200, {})
    vendor = requests.post(
        bulk, data=b'{"entities": []}', auth=AUTH, headers={"Content-Type": "application/vnd.atlas+json"}, timeout=10
    )
    assert vendor.status_code == 200
    text_faults = requests.put(
        f"{catalog.url}/_ol2purview/faults", data="none", auth=AUTH, headers={"Content-Type": "text/plain"}, timeout=10
    )
    assert text_faults.status_code == 415
    bare_faults = requests.put(f"{catalog.url}/_ol2purview/faults", data="none", auth=AUTH, timeout=10)
    assert bare_faults.json() == {"spec": ""}


def test_control_routes_and_page_need_the_same_auth_as_the_api(catalog: CatalogServer) -> None:
    for method, path in (
        ("GET", "/_ol2purview/calls"),
        ("POST", "/_ol2purview/calls/reset"),
        ("GET", "/_ol2purview/faults"),
        ("PUT", "/_ol2purview/faults"),
        ("GET", "/_ol2purview/page/search?q=x"),
        ("GET", "/"),
        ("GET", "/api/atlas/v2/types/typedefs"),
    ):
        answer = requests.request(method, catalog.url + path, timeout=10)
        assert (answer.status_code, answer.headers["WWW-Authenticate"], answer.json()) == (
            401,
            'Basic realm="ol2purview catalog"',
            {
                "errorCode": "ATLAS-403-00-001",
                "errorMessage": "anonymous is not authorized to perform this request: this catalog requires HTTP basic "
                "authentication",
            },
        ), path
    wrong = requests.get(catalog.url + "/_ol2purview/calls", auth=(USER, "wrong"), timeout=10)
    assert wrong.status_code == 401


def test_every_error_is_atlas_json_and_trailing_slashes_are_served(catalog: CatalogServer) -> None:
    wrong_method = requests.put(f"{catalog.atlas_url}/lineage/x", auth=AUTH, timeout=10)
    assert (wrong_method.status_code, sorted(wrong_method.headers["Allow"].split(", ")), wrong_method.json()) == (
        405,
        ["GET", "HEAD"],
        {
            "errorCode": "ATLAS-405-00-001",
            "errorMessage": "Error 405 - The request method PUT is inappropriate for the URL: /api/atlas/v2/lineage/x",
        },
    )
    nowhere = requests.get(f"{catalog.atlas_url}/no/such/route", auth=AUTH, timeout=10)
    assert (nowhere.status_code, nowhere.json()) == (
        404,
        {"errorCode": "ATLAS-404-00-004", "errorMessage": "No result found for GET /api/atlas/v2/no/such/route"},
    )
    created = requests.post(
        f"{catalog.atlas_url}/entity/bulk/", json=ENTITY, auth=AUTH, timeout=10, allow_redirects=False
    )
    assert created.status_code == 200 and list(created.json()["mutatedEntities"]) == ["CREATE"]
    guid = created.json()["guidAssignments"]["-1"]
    read = requests.get(f"{catalog.atlas_url}/entity/guid/{guid}/", auth=AUTH, timeout=10, allow_redirects=False)
    assert (read.status_code, read.json()["entity"]["guid"]) == (200, guid)
    routes = requests.get(f"{catalog.url}/_ol2purview/calls", auth=AUTH, timeout=10).json()["byRoute"]
    assert routes == {
        "PUT /lineage/{guid}": 1,
        "GET (no such route)": 1,
        "POST /entity/bulk": 1,
        "GET /entity/guid/{guid}": 1,
    }


def test_the_page_traffic_is_not_counted(catalog: CatalogServer) -> None:
    page = {"X-Ol2purview-Client": "lineage-page"}
    requests.get(f"{catalog.atlas_url}/types/typedefs/headers", auth=AUTH, headers=page, timeout=10)
    requests.post(f"{catalog.atlas_url}/search/query", json={"keywords": "*"}, auth=AUTH, headers=page, timeout=10)
    requests.get(f"{catalog.url}/_ol2purview/page/search?q=x", auth=AUTH, timeout=10)
    requests.get(f"{catalog.atlas_url}/types/typedefs/headers", auth=AUTH, timeout=10)
    assert requests.get(f"{catalog.url}/_ol2purview/calls", auth=AUTH, timeout=10).json() == {
        "total": 1,
        "byRoute": {"GET /types/typedefs/headers": 1},
    }


def test_database_files_are_owner_only(tmp_path: Path) -> None:
    db = tmp_path / "fresh" / "catalog.sqlite"
    with CatalogServer(db) as server:
        requests.post(f"{server.atlas_url}/entity/bulk", json=ENTITY, timeout=10).raise_for_status()
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in db.parent.iterdir()}
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700
    assert modes == {name: 0o600 for name in modes} and "catalog.sqlite" in modes


def test_password_from_the_environment(tmp_path: Path) -> None:
    """`ol2purview catalog --user U` with $OL2PURVIEW_CATALOG_PASSWORD: the password never is on the command line."""
    env = {**os.environ, "OL2PURVIEW_CATALOG_PASSWORD": "from-env-pw"}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tools.cli",
            "catalog",
            "--port",
            "0",
            "--user",
            "admin",
            "--db",
            str(tmp_path / "c.sqlite"),
        ],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        url = first.split()[2].rstrip("/")
        assert first.startswith("catalog page:  http://127.0.0.1:")
        assert requests.get(f"{url}/_ol2purview/health", auth=("admin", "from-env-pw"), timeout=10).json() == {
            "status": "ok"
        }
        assert requests.get(f"{url}/_ol2purview/health", auth=("admin", "other"), timeout=10).status_code == 401
        assert "from-env-pw" not in " ".join(process.args)  # type: ignore[arg-type]
    finally:
        process.terminate()
        process.wait(timeout=10)
