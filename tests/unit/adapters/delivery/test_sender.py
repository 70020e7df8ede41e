"""Delivering events as envelopes: inline when small, a gzip claim check in Blob storage (Azurite) or a folder when
big, opened back identical and verified against the envelope's size and SHA-256."""

from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
from azure.storage.blob import BlobServiceClient

from olparser.adapters.delivery import envelope as env
from olparser.adapters.delivery.claim_check import (
    BlobClaimCheckStore,
    ClaimCheckError,
    ClaimCheckStore,
    FolderClaimCheckStore,
)
from olparser.adapters.delivery.queues import MAX_MESSAGE_BYTES, base64_size
from olparser.adapters.delivery.sender import EventCourier, courier_from_settings
from olparser.settings import Settings
from tests.support.unique_names import unique_name

SMALL = {"eventType": "START", "run": {"runId": "r-small"}, "job": {"namespace": "ns", "name": "j"}}


def big_event(target_bytes: int = 2 * 1024 * 1024) -> bytes:
    """A ~2 MB event with a logical-plan-like facet and non-ASCII text."""
    nodes = [
        {
            "class": "org.apache.spark.sql.catalyst.plans.logical.Project",
            "num-children": 1,
            "projectList": [f"col_{i}_größe"],
        }
        for i in range(target_bytes // 90)
    ]
    event = {
        "eventType": "COMPLETE",
        "run": {"runId": "r-big", "facets": {"spark.logicalPlan": {"plan": nodes}}},
        "job": {"namespace": "ns", "name": "big"},
    }
    return json.dumps(event, ensure_ascii=False).encode("utf-8")


@dataclass
class Backend:
    """A claim-check store, and a way to put raw bytes where it keeps an event (to plant a corrupt one)."""

    store: ClaimCheckStore
    put_raw: Callable[[str, bytes], None]


@pytest.fixture(params=["folder", pytest.param("blob", marks=pytest.mark.azurite)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    container = unique_name("c")
    if request.param == "folder":
        folder = tmp_path / "claim-checks" / container

        def put_file(name: str, data: bytes) -> None:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)

        return Backend(FolderClaimCheckStore(tmp_path / "claim-checks", container), put_file)
    connection = request.getfixturevalue("azurite").connection_string

    def put_blob(name: str, data: bytes) -> None:
        client = BlobServiceClient.from_connection_string(connection).get_container_client(container)
        if not client.exists():
            client.create_container()
        client.upload_blob(name, data, overwrite=True)

    return Backend(BlobClaimCheckStore(connection, container), put_blob)


@pytest.fixture
def store(backend: Backend) -> ClaimCheckStore:
    return backend.store


def test_small_event_goes_inline_and_stores_nothing(store: ClaimCheckStore) -> None:
    courier = EventCourier(store)
    text = courier.deliver(json.dumps(SMALL).encode(), "r-small", "START", envelope_id="e-small")
    assert json.loads(text) == {"v": 1, "id": "e-small", "runId": "r-small", "eventType": "START", "inline": SMALL}
    assert courier.open_event(text) == SMALL
    with pytest.raises(ClaimCheckError, match="not found"):
        store.get(f"{store.container}/{env.claim_check_name('e-small')}")


def test_2mb_event_goes_to_a_claim_check_and_comes_back_identical(store: ClaimCheckStore) -> None:
    event_json = big_event()
    assert len(event_json) > 2_000_000
    courier = EventCourier(store)
    text = courier.deliver(event_json, "r-big", "COMPLETE", envelope_id="e-big")
    envelope = env.parse(text)
    assert envelope == env.ClaimCheckEnvelope(
        "e-big", "r-big", "COMPLETE", f"{store.container}/e-big.json.gz", env.sha256_hex(event_json), len(event_json)
    )
    assert base64_size(text) < 1024 < MAX_MESSAGE_BYTES  # the queue message stays small
    assert store.get(envelope.blob) == event_json  # stored bytes are byte-identical
    assert courier.open_event(text) == json.loads(event_json)


def test_retried_delivery_with_the_same_id_overwrites_the_same_claim_check(store: ClaimCheckStore) -> None:
    courier = EventCourier(store, inline_limit=10)
    first = courier.deliver(json.dumps(SMALL).encode(), "r", "START", envelope_id="e-again")
    second = courier.deliver(json.dumps(SMALL).encode(), "r", "START", envelope_id="e-again")
    assert first == second
    assert courier.open_event(second) == SMALL


def test_altered_claim_check_is_refused(store: ClaimCheckStore) -> None:
    courier = EventCourier(store, inline_limit=10)
    text = courier.deliver(json.dumps(SMALL).encode(), "r", "START", envelope_id="e-altered")
    store.put(env.claim_check_name("e-altered"), json.dumps({**SMALL, "eventType": "FAIL"}).encode())
    with pytest.raises(ClaimCheckError, match="does not match its envelope"):
        courier.open_event(text)


def test_missing_claim_check_is_a_clear_error(store: ClaimCheckStore) -> None:
    text = env.to_text(env.claim_check_for(b"{}", "e-missing", None, None, f"{store.container}/e-missing.json.gz"))
    with pytest.raises(ClaimCheckError, match="e-missing.json.gz' not found"):
        EventCourier(store).open_event(text)


@pytest.mark.azurite
def test_blob_is_gzip_of_the_event(azurite) -> None:
    container = unique_name("c")
    courier = EventCourier(BlobClaimCheckStore(azurite.connection_string, container), inline_limit=10)
    courier.deliver(b'{"a":1}', None, None, envelope_id="e-gz")
    raw = (
        BlobServiceClient.from_connection_string(azurite.connection_string)
        .get_blob_client(container, "e-gz.json.gz")
        .download_blob()
        .readall()
    )
    assert gzip.decompress(raw) == b'{"a":1}'


@pytest.mark.parametrize("reference", ["no-slash", "c/../etc/passwd", "../x/y", "c/"])
def test_folder_store_refuses_path_tricks(tmp_path: Path, reference: str) -> None:
    with pytest.raises(ClaimCheckError):
        FolderClaimCheckStore(tmp_path, "c").get(reference)


def test_courier_from_settings_uses_a_folder_without_storage_connection(tmp_path: Path) -> None:
    courier = courier_from_settings(Settings(data_dir=tmp_path, claim_check_container="events"))
    text = courier.deliver(big_event(100_000), "r", "COMPLETE", envelope_id="e-local")
    assert env.parse(text).blob == "events/e-local.json.gz"
    assert (tmp_path / "claim-checks" / "events" / "e-local.json.gz").is_file()


# --- corrupt claim checks --------------------------------------------------------------------------------------------


def claim_check_text(store: ClaimCheckStore, envelope_id: str, event_json: bytes) -> str:
    """The envelope of an event stored (or planted) under `envelope_id`."""
    reference = f"{store.container}/{env.claim_check_name(envelope_id)}"
    return env.to_text(env.claim_check_for(event_json, envelope_id, "r", "COMPLETE", reference))


@pytest.mark.parametrize(
    "stored, problem",
    [
        (b"plain text, never compressed", "is not valid gzip: Not a gzipped file (b'pl')"),
        (
            gzip.compress(b'{"eventType":"START"}', mtime=0)[:-12],
            "is not valid gzip: Compressed file ended before the end-of-stream marker was reached",
        ),
        (b"", "does not match its envelope (size or SHA-256)"),  # gzip of nothing is no event
    ],
)
def test_a_stored_event_that_is_not_gzip_is_a_clear_error(backend: Backend, stored: bytes, problem: str) -> None:
    backend.put_raw("e-corrupt.json.gz", stored)
    text = claim_check_text(backend.store, "e-corrupt", b'{"eventType":"START"}')
    with pytest.raises(ClaimCheckError) as refused:
        EventCourier(backend.store).open_event(text)
    assert str(refused.value) == f"stored event '{backend.store.container}/e-corrupt.json.gz' {problem}"


@pytest.mark.parametrize(
    "event_json, problem",
    [
        (b"{not json", "is not JSON"),
        (b"\xff\xfe{}", "is not JSON"),
        (b'["an", "array"]', "is not a JSON object"),
        (b'"a string"', "is not a JSON object"),
    ],
)
def test_a_stored_event_that_is_not_a_json_object_is_a_clear_error(
    store: ClaimCheckStore, event_json: bytes, problem: str
) -> None:
    store.put(env.claim_check_name("e-odd"), event_json)  # stored as sent: size and SHA-256 match the envelope
    with pytest.raises(ClaimCheckError) as refused:
        EventCourier(store).open_event(claim_check_text(store, "e-odd", event_json))
    assert str(refused.value) == f"stored event '{store.container}/e-odd.json.gz' {problem}"


def test_a_folder_write_leaves_only_the_finished_file(tmp_path: Path) -> None:
    store = FolderClaimCheckStore(tmp_path, "events")
    assert store.put("e-1.json.gz", b'{"a":1}') == "events/e-1.json.gz"
    assert sorted(os.listdir(tmp_path / "events")) == ["e-1.json.gz"]


def test_a_failed_folder_write_removes_its_temporary_file(tmp_path: Path) -> None:
    store = FolderClaimCheckStore(tmp_path, "events")
    (tmp_path / "events" / "e-2.json.gz").mkdir(parents=True)  # the final rename cannot replace a folder
    with pytest.raises(IsADirectoryError):
        store.put("e-2.json.gz", b'{"a":2}')
    assert sorted(os.listdir(tmp_path / "events")) == ["e-2.json.gz"]  # the folder only: no .tmp- file left
    assert os.listdir(tmp_path / "events" / "e-2.json.gz") == []


@pytest.mark.azurite
def test_two_blob_stores_share_a_container(azurite) -> None:
    container = unique_name("c")
    first = BlobClaimCheckStore(azurite.connection_string, container)
    second = BlobClaimCheckStore(azurite.connection_string, container)  # its create finds the container there
    assert first.put("a.json.gz", b'{"a":1}') == f"{container}/a.json.gz"
    assert second.put("b.json.gz", b'{"b":2}') == f"{container}/b.json.gz"
    assert (first.get(f"{container}/b.json.gz"), second.get(f"{container}/a.json.gz")) == (b'{"b":2}', b'{"a":1}')


@pytest.mark.azurite
def test_courier_from_settings_uses_blobs_with_a_storage_connection(azurite) -> None:
    container = unique_name("c")
    courier = courier_from_settings(
        Settings(storage_connection=azurite.connection_string, claim_check_container=container)
    )
    event_json = big_event(100_000)
    text = courier.deliver(event_json, "r", "COMPLETE", envelope_id="e-blob")
    assert env.parse(text).blob == f"{container}/e-blob.json.gz"
    assert courier.open_event(text) == json.loads(event_json)
