"""tools.azurite: the emulator starts on the asked ports, answers the Azure SDKs, and stop() ends exactly its PID."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from azure.data.tables import TableServiceClient
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueClient

from tests.support.azurite_fixture import require_azurite
from tests.support.ports import free_port
from tools.azurite import (
    ACCOUNT_KEY,
    Azurite,
    AzuriteNotInstalled,
    _answers,
    connection_string,
    resolve_connection_string,
    start_azurite,
)


def test_connection_string_names_every_endpoint_with_the_development_account():
    assert connection_string(11000, 11001, 11002) == (
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + ACCOUNT_KEY + ";"
        "BlobEndpoint=http://127.0.0.1:11000/devstoreaccount1;"
        "QueueEndpoint=http://127.0.0.1:11001/devstoreaccount1;"
        "TableEndpoint=http://127.0.0.1:11002/devstoreaccount1;"
    )


def test_use_development_storage_means_the_default_ports():
    assert resolve_connection_string("UseDevelopmentStorage=true") == connection_string(10000, 10001, 10002)
    assert resolve_connection_string("UseDevelopmentStorage=true;") == connection_string(10000, 10001, 10002)
    other = "DefaultEndpointsProtocol=https;AccountName=prod;AccountKey=a2V5;EndpointSuffix=core.windows.net"
    assert resolve_connection_string(other) == other


@pytest.mark.azurite
def test_the_fixture_pid_is_the_node_process_and_every_service_answers(azurite):
    cmdline = Path(f"/proc/{azurite.pid}/cmdline").read_bytes().split(b"\0")
    assert Path(cmdline[0].decode()).name == "node"
    assert cmdline[1].decode().endswith("azurite/dist/src/azurite.js")
    assert b"--skipApiVersionCheck" in cmdline and b"--disableTelemetry" in cmdline and b"--silent" in cmdline

    name = f"q{uuid.uuid4().hex[:12]}"
    queue = QueueClient.from_connection_string(azurite.connection_string, name)
    queue.create_queue()
    queue.send_message("hello")
    assert [m.content for m in queue.receive_messages()] == ["hello"]
    container = BlobServiceClient.from_connection_string(azurite.connection_string).create_container(name)
    container.upload_blob("event.json", b"{}")
    assert container.download_blob("event.json").readall() == b"{}"
    table = TableServiceClient.from_connection_string(azurite.connection_string).create_table(name)
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "n": 1})
    assert table.get_entity("p", "r")["n"] == 1


@pytest.mark.azurite
def test_stop_ends_exactly_that_process_and_frees_its_ports(azurite, tmp_path):
    second = start_azurite(tmp_path / "second")
    assert second.pid != azurite.pid
    assert second.running() and _answers(second.host, second.table_port)
    assert second.stop() == 0
    assert not second.running()
    assert not _answers(second.host, second.table_port)
    assert second.stop() == 0  # stopping twice is harmless
    assert azurite.running() and _answers(azurite.host, azurite.table_port)


def test_stop_kills_a_process_that_ignores_sigterm(tmp_path):
    stubborn = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal, sys, time\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "print('ready', flush=True)\ntime.sleep(60)",
        ],
        stdout=subprocess.PIPE,
    )
    assert stubborn.stdout.readline() == b"ready\n"
    handle = Azurite(stubborn, tmp_path, 1, 2, 3)
    assert handle.stop(timeout=0.3) == -9
    stubborn.stdout.close()


def test_missing_binary_is_reported_with_the_install_command(tmp_path):
    with pytest.raises(AzuriteNotInstalled, match="run `npm ci`"):
        start_azurite(tmp_path / "data", binary=tmp_path / "node_modules" / ".bin" / "azurite")


def test_missing_binary_skips_locally_and_fails_in_ci(tmp_path):
    missing = tmp_path / "azurite"
    with pytest.raises(pytest.skip.Exception, match="npm ci"):
        require_azurite(missing, env={})
    with pytest.raises(pytest.fail.Exception, match="CI=true and Azurite is not installed"):
        require_azurite(missing, env={"CI": "true"})


@pytest.mark.azurite
def test_a_taken_port_is_reported_with_azurites_own_message(azurite, tmp_path):
    from tools.azurite import AzuriteStartError

    with pytest.raises(AzuriteStartError, match=f"(?s)Azurite exited with code 1: .*EADDRINUSE.*{azurite.table_port}"):
        start_azurite(
            tmp_path / "clash",
            blob_port=free_port(),
            queue_port=free_port(),
            table_port=azurite.table_port,
            startup_timeout=20,
        )
    assert azurite.running()
