"""The event archive: every accepted event once, gzip, under the UTC hour of its eventTime, in a folder or in Blob
storage (Azurite), written by the queue trigger before processing."""

from __future__ import annotations

import gzip
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from azure.storage.blob import BlobServiceClient

from olparser.adapters.delivery.archive import (
    BlobArchiveStore,
    EventArchive,
    FolderArchiveStore,
    archive_from_settings,
    archive_name,
    event_hour,
    event_json,
)
from olparser.adapters.delivery.envelope import sha256_hex
from olparser.settings import Settings
from tests.spark.events import spark_run

EVENT = spark_run(0)[0]  # eventTime 2025-03-01T10:00:01.000Z


def test_the_name_is_the_hour_of_the_event_time_and_the_hash_of_the_event():
    data = event_json(EVENT)
    assert archive_name(data, EVENT["eventTime"]) == f"2025/03/01/10/{sha256_hex(data)}.json.gz"
    assert archive_name(data, "2025-03-01T23:30:00+02:00").startswith("2025/03/01/21/")
    assert archive_name(data, "2024-12-31T23:59:59.999999999Z").startswith("2024/12/31/23/")


def test_an_unreadable_time_files_under_the_current_hour():
    now = datetime(2026, 5, 4, 3, 2, 1, tzinfo=timezone.utc)
    assert event_hour("yesterday", now) == datetime(2026, 5, 4, 3, tzinfo=timezone.utc)


def test_the_folder_archive_keeps_each_event_once(tmp_path: Path):
    archive = EventArchive(FolderArchiveStore(tmp_path))
    first = archive.keep(EVENT)
    stored = tmp_path / first
    written = stored.stat().st_mtime_ns
    assert archive.keep(json.loads(json.dumps(EVENT))) == first  # the same event again (a retried message)
    assert stored.stat().st_mtime_ns == written
    assert json.loads(gzip.decompress(stored.read_bytes())) == EVENT
    assert [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()] == [first]


def test_settings_choose_the_archive(tmp_path: Path):
    assert archive_from_settings(Settings(data_dir=tmp_path, archive_events=False)) is None
    local = archive_from_settings(Settings(data_dir=tmp_path))
    assert isinstance(local.store, FolderArchiveStore) and local.store.root == tmp_path / "archive"
    assert Settings.from_env({"WEBSITE_INSTANCE_ID": "i-1"}).archive_store == "blob"
    assert Settings.from_env({}).archive_store == "folder"
    with pytest.raises(ValueError, match="ARCHIVE_STORE=blob needs AzureWebJobsStorage"):
        archive_from_settings(Settings(archive_store="blob"))
    with pytest.raises(ValueError, match="ARCHIVE_STORE must be one of folder, blob, not 'tape'"):
        archive_from_settings(Settings(archive_store="tape"))


@pytest.mark.azurite
def test_the_blob_archive_keeps_each_event_once(azurite):  # noqa: F811
    archive = EventArchive(BlobArchiveStore(azurite.connection_string, "lineage-archive-test"))
    name = archive.keep(EVENT)
    assert archive.keep(json.loads(json.dumps(EVENT))) == name  # a retried message: the same blob again
    container = BlobServiceClient.from_connection_string(azurite.connection_string).get_container_client(
        "lineage-archive-test"
    )
    assert [b.name for b in container.list_blobs()] == [name]
    assert json.loads(gzip.decompress(container.download_blob(name).readall())) == EVENT


def test_the_queue_trigger_archives_an_event_before_processing_it_even_when_processing_fails(tmp_path, monkeypatch):
    import azure.functions as func

    import function_app
    from olparser.adapters.delivery import envelope
    from olparser.adapters.runtime import reset_process_runtime
    from tests.support.ports import free_port

    for name, value in {
        "OL2PURVIEW_DATA_DIR": str(tmp_path),
        "CATALOG_MAX_ATTEMPTS": "1",
        "ATLAS_ENDPOINT": f"http://127.0.0.1:{free_port()}/api/atlas/v2",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AzureWebJobsStorage", raising=False)
    complete = spark_run(0)[1]
    message = envelope.to_text(envelope.InlineEnvelope("id-1", complete["run"]["runId"], "COMPLETE", complete))
    reset_process_runtime()
    try:
        with pytest.raises(Exception, match="unreachable"):
            function_app.process_lineage_event(func.QueueMessage(body=message.encode("utf-8")))
    finally:
        reset_process_runtime()
    archived = list((tmp_path / "archive").rglob("*.json.gz"))
    assert [p.relative_to(tmp_path / "archive").parts[:4] for p in archived] == [("2025", "03", "01", "10")]
    assert json.loads(gzip.decompress(archived[0].read_bytes())) == complete
