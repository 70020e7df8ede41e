"""`ol2purview catalog scan`: the Blob scanner's names, whose rules it applies (`--rules FILE`, else the catalog's
own resource-set rule config, else Purview's defaults) and the errors it answers (the Spark-written lake is scanned
in tests/spark/test_catalog_scan.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests

from olparser.resolution.resource_sets import default_account_config
from tests.support.catalog_server import PASSWORD, USER
from tools.catalog import CatalogServer
from tools.cli import main

BLOB = "https://contosoblob.blob.core.windows.net/landing"
CONFIG = "/resourceSetRuleConfigs/defaultResourceSetRuleConfig"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("PURVIEW_ACCOUNT_NAME", "ATLAS_ENDPOINT", "ATLAS_USERNAME", "ATLAS_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OL2PURVIEW_DATA_DIR", str(tmp_path / "data"))
    root = tmp_path / "landing"
    for name, text in (
        ("weblogs/cy_gb/1004.json", "{}"),
        ("weblogs/de_Ch/23434.json", "[]"),
        ("drop/orders.csv", "id\n"),
    ):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _no_locales() -> dict:
    body = default_account_config()
    next(r for r in body["pathPatternConfig"]["regexReplacers"] if r["name"] == "Localization")["disabled"] = True
    return body


def _keys(catalog: CatalogServer, auth: tuple[str, str] | None = None) -> list[tuple[str, str]]:
    found = requests.post(
        f"{catalog.atlas_url}/search/basic", json={"query": "*", "limit": 1000}, auth=auth, timeout=10
    ).json()["entities"]
    return sorted((e["typeName"], e["attributes"]["qualifiedName"]) for e in found)


def test_the_blob_scanner_with_a_rules_file(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(_no_locales()))
    catalog = CatalogServer(tmp_path / "catalog.sqlite").start()
    try:
        code = main(
            [
                "catalog",
                "scan",
                str(folder),
                "--account",
                "contosoblob",
                "--container",
                "landing",
                "--blob",
                "--rules",
                str(rules),
                "--atlas-url",
                catalog.atlas_url,
            ]
        )
        assert code == 0
        assert _keys(catalog) == [
            ("azure_blob_container", BLOB),
            ("azure_blob_path", f"{BLOB}/drop/orders.csv"),
            ("azure_blob_resource_set", f"{BLOB}/weblogs/cy_gb/{{N}}.json"),
            ("azure_blob_resource_set", f"{BLOB}/weblogs/de_Ch/{{N}}.json"),
        ]
        out = capsys.readouterr().out.splitlines()
        assert out[0] == f"registered in {catalog.atlas_url} (rules: {rules})"
        assert out[-1] == "1 container, 2 resource sets (2 files), 1 single file: 4 created, 0 updated, 0 unchanged"
    finally:
        catalog.stop()


def test_the_catalogs_own_rules_then_the_defaults(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    catalog = CatalogServer(tmp_path / "catalog.sqlite", user=USER, password=PASSWORD).start()
    try:
        requests.put(
            f"{catalog.url}{CONFIG}",
            params={"api-version": "2019-11-01-preview"},
            auth=(USER, PASSWORD),
            json=_no_locales(),
            timeout=10,
        ).raise_for_status()
        args = [
            "catalog",
            "scan",
            str(folder),
            "--account",
            "contosolake",
            "--container",
            "landing",
            "--prefix",
            "raw/in",
            "--atlas-url",
            catalog.atlas_url,
            "--user",
            USER,
        ]
        with pytest.MonkeyPatch.context() as env:
            env.setenv("ATLAS_PASSWORD", PASSWORD)
            assert main(args) == 0
            lake = "https://contosolake.dfs.core.windows.net/landing/raw/in"
            assert [qn for _t, qn in _keys(catalog, (USER, PASSWORD))][1:] == [
                f"{lake}/drop/orders.csv",
                f"{lake}/weblogs/cy_gb/{{N}}.json",
                f"{lake}/weblogs/de_Ch/{{N}}.json",
            ]
            assert "rules: the catalog's resource-set rule config" in capsys.readouterr().out
    finally:
        catalog.stop()
    plain_atlas = CatalogServer(tmp_path / "other.sqlite").start()  # stands for an Atlas without the account API
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("tools.catalog.scan.CONFIG_PATH", "/no/such/route")
            assert (
                main(
                    [
                        "catalog",
                        "scan",
                        str(folder),
                        "--account",
                        "contosolake",
                        "--container",
                        "landing",
                        "--atlas-url",
                        plain_atlas.atlas_url,
                    ]
                )
                == 0
            )
        assert "rules: Purview's default resource-set rules" in capsys.readouterr().out
        assert (
            "azure_datalake_gen2_resource_set",
            "https://contosolake.dfs.core.windows.net/landing/weblogs/{LOC}/{N}.json",
        ) in _keys(plain_atlas)
    finally:
        plain_atlas.stop()


def test_a_scan_registers_into_the_collection_given(folder: Path, tmp_path: Path) -> None:
    """As a Purview scan registers a source's assets in the source's collection (placement by the scanned output's
    collection is tried offline this way)."""
    catalog = CatalogServer(tmp_path / "catalog.sqlite", account_name="contoso-purview").start()
    try:
        requests.put(
            f"{catalog.url}/account/collections/sales01",
            params={"api-version": "2019-11-01-preview"},
            json={"parentCollection": {"referenceName": "contoso-purview"}},
            timeout=10,
        ).raise_for_status()
        assert (
            main(
                [
                    "catalog",
                    "scan",
                    str(folder),
                    "--account",
                    "contosolake",
                    "--container",
                    "landing",
                    "--collection",
                    "sales01",
                    "--atlas-url",
                    catalog.atlas_url,
                ]
            )
            == 0
        )
        found = requests.post(
            f"{catalog.url}/datamap/api/search/query",
            params={"api-version": "2023-09-01"},
            json={"keywords": None, "limit": 100},
            timeout=10,
        ).json()["value"]
        collections = {
            requests.get(f"{catalog.atlas_url}/entity/guid/{v['id']}", timeout=10).json()["entity"]["collectionId"]
            for v in found
        }
        assert len(found) > 1 and collections == {"sales01"}
    finally:
        catalog.stop()


@pytest.mark.parametrize(
    "args, code, message",
    [
        (
            ["--account", "Contoso", "--container", "landing"],
            2,
            "--account must be 3-24 lowercase letters or digits, got 'Contoso'",
        ),
        (
            ["--account", "contoso", "--container", "a--b"],
            2,
            "--container must be 3-63 lowercase letters, digits or "
            "single hyphens, starting and ending with a letter or digit, "
            "got 'a--b'",
        ),
    ],
)
def test_bad_names_are_refused(
    folder: Path, capsys: pytest.CaptureFixture, args: list[str], code: int, message: str
) -> None:
    assert main(["catalog", "scan", str(folder), *args, "--atlas-url", "http://127.0.0.1:9/api/atlas/v2"]) == code
    assert capsys.readouterr().err == f"ol2purview catalog scan: {message}\n"


def test_other_refusals(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture, closed_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ["--account", "contoso", "--container", "landing"]
    assert main(["catalog", "scan", str(tmp_path / "missing"), *names]) == 2
    assert capsys.readouterr().err == f"ol2purview catalog scan: {tmp_path / 'missing'} is not a folder\n"
    bad_rules = tmp_path / "bad.json"
    bad_rules.write_text('{"pathPatternConfig": {"scopedRules": 1}}')
    assert (
        main(
            [
                "catalog",
                "scan",
                str(folder),
                *names,
                "--rules",
                str(bad_rules),
                "--atlas-url",
                f"http://127.0.0.1:{closed_port}/api/atlas/v2",
            ]
        )
        == 2
    )
    assert capsys.readouterr().err == (
        f"ol2purview catalog scan: --rules {bad_rules}: resource set rule config: "
        "pathPatternConfig.scopedRules: must be list, got int\n"
    )
    assert (
        main(["catalog", "scan", str(folder), *names, "--atlas-url", f"http://127.0.0.1:{closed_port}/api/atlas/v2"])
        == 1
    )
    assert capsys.readouterr().err.startswith(f"ol2purview catalog scan: http://127.0.0.1:{closed_port}/api/atlas/v2: ")
    monkeypatch.setenv("PURVIEW_ACCOUNT_NAME", "contoso-purview")
    assert main(["catalog", "scan", str(folder), *names]) == 2
    assert capsys.readouterr().err == (
        "ol2purview catalog scan: it writes what Purview's scanners would and refuses a real Purview (run Purview's "
        "scan there); point it at an Atlas or the embedded catalog with --atlas-url\n"
    )
