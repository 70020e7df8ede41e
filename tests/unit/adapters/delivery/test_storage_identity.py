"""Storage without a key (#23 item 2): with no AzureWebJobsStorage connection string, the code reaches the account
the way the Functions host does, from `AzureWebJobsStorage__accountName` or the `__*ServiceUri` settings, with a
token credential (the managed identity in Azure). Offline: the settings are parsed and the clients are built,
nothing is called."""

from __future__ import annotations

import pytest
from azure.core.credentials import AccessToken
from azure.identity import DefaultAzureCredential

from olparser.adapters.delivery.archive import archive_from_settings
from olparser.adapters.delivery.queues import AzureQueueService, queue_service_from_settings
from olparser.adapters.delivery.sender import courier_from_settings
from olparser.adapters.run_state import open_run_state_store
from olparser.adapters.storage_account import StorageAccount, storage_account
from olparser.settings import Settings, StorageEndpoints

KEYED = "DefaultEndpointsProtocol=https;AccountName=ol2pkeyed;AccountKey=a2V5;EndpointSuffix=core.windows.net"


class FixedToken:
    """A token credential that never calls anything."""

    def get_token(self, *scopes: str, **kwargs: object) -> AccessToken:
        return AccessToken("token", 4_102_444_800)


def test_an_account_name_gives_the_public_cloud_service_uris():
    settings = Settings.from_env({"AzureWebJobsStorage__accountName": "ol2pab12"})
    assert settings.storage_endpoints == StorageEndpoints(
        blob="https://ol2pab12.blob.core.windows.net",
        queue="https://ol2pab12.queue.core.windows.net",
        table="https://ol2pab12.table.core.windows.net",
    )
    assert settings.storage_connection is None


def test_service_uris_override_the_account_name_per_service():
    settings = Settings.from_env(
        {
            "AzureWebJobsStorage__accountName": "ol2pab12",
            "AzureWebJobsStorage__queueServiceUri": "https://ol2pab12.queue.core.chinacloudapi.cn/",
            "AzureWebJobsStorage__tableServiceUri": "https://ol2pab12.table.core.chinacloudapi.cn",
        }
    )
    assert settings.storage_endpoints == StorageEndpoints(
        blob="https://ol2pab12.blob.core.windows.net",
        queue="https://ol2pab12.queue.core.chinacloudapi.cn",
        table="https://ol2pab12.table.core.chinacloudapi.cn",
    )


def test_no_storage_setting_means_no_account():
    settings = Settings.from_env({})
    assert (settings.storage_connection, settings.storage_endpoints) == (None, None)
    assert StorageAccount.from_settings(settings) is None


@pytest.mark.parametrize(
    "env,message",
    [
        (
            {"AzureWebJobsStorage__accountName": "Ol2p_Prod"},
            "AzureWebJobsStorage__accountName must be 3 to 24 lowercase letters and digits, got 'Ol2p_Prod'",
        ),
        (
            {"AzureWebJobsStorage__queueServiceUri": "https://a.queue.core.windows.net"},
            "AzureWebJobsStorage__blobServiceUri is not set: set AzureWebJobsStorage__accountName, or all three",
        ),
        (
            {
                "AzureWebJobsStorage__accountName": "ol2pab12",
                "AzureWebJobsStorage__blobServiceUri": "http://ol2pab12.blob.core.windows.net",
            },
            "AzureWebJobsStorage__blobServiceUri must be an https:// URI \\(http:// only on loopback\\), "
            "got 'http://ol2pab12.blob.core.windows.net'",
        ),
        (
            {"AzureWebJobsStorage__accountName": "ol2pab12", "AzureWebJobsStorage__tableServiceUri": "ol2pab12"},
            "AzureWebJobsStorage__tableServiceUri must be an https:// URI",
        ),
    ],
)
def test_bad_identity_settings_are_named(env, message):
    with pytest.raises(ValueError, match=message):
        Settings.from_env(env)


def test_a_connection_string_wins_over_the_identity_settings():
    settings = Settings.from_env({"AzureWebJobsStorage": KEYED, "AzureWebJobsStorage__accountName": "ol2pab12"})
    account = StorageAccount.from_settings(settings)
    assert (account.uses_identity, account.connection_string) == (False, KEYED)
    assert account.blob_service().url == "https://ol2pkeyed.blob.core.windows.net/"
    assert KEYED not in repr(settings)  # the key stays out of logs that print the settings


def test_identity_clients_use_the_service_uris_and_the_token_credential():
    credential = FixedToken()
    settings = Settings.from_env({"AzureWebJobsStorage__accountName": "ol2pab12"})
    account = StorageAccount.from_settings(settings, credential=credential)
    blob, table = account.blob_service(), account.table_service()
    queue = account.queue_client("lineage-events-poison")
    assert (blob.url, table.url, queue.url) == (
        "https://ol2pab12.blob.core.windows.net/",
        "https://ol2pab12.table.core.windows.net",
        "https://ol2pab12.queue.core.windows.net/lineage-events-poison",
    )
    assert blob.credential is credential and table.credential is credential and queue.credential is credential
    assert account.describe() == "https://ol2pab12.queue.core.windows.net (managed identity)"


def test_without_a_credential_every_client_shares_one_default_azure_credential():
    settings = Settings.from_env({"AzureWebJobsStorage__accountName": "ol2pab12", "ARCHIVE_STORE": "blob"})
    courier = courier_from_settings(settings)
    archive = archive_from_settings(settings)
    claim_checks = courier.store._service
    archived = archive.store.blobs._service
    assert claim_checks.url == archived.url == "https://ol2pab12.blob.core.windows.net/"
    assert isinstance(claim_checks.credential, DefaultAzureCredential)
    assert claim_checks.credential is archived.credential


def test_the_live_path_picks_azure_queues_with_identity_settings():
    service = queue_service_from_settings(Settings.from_env({"AzureWebJobsStorage__accountName": "ol2pab12"}))
    assert isinstance(service, AzureQueueService)
    assert service._account.endpoints.queue == "https://ol2pab12.queue.core.windows.net"


def test_a_connection_string_passed_by_a_tool_is_an_account_too():
    assert storage_account(KEYED).connection_string == KEYED
    account = StorageAccount(connection_string=KEYED)
    assert storage_account(account) is account
    with pytest.raises(ValueError, match="either a connection string or service URIs"):
        StorageAccount()


def test_the_table_store_without_any_storage_setting_says_what_to_set():
    with pytest.raises(
        ValueError,
        match="RUN_STATE_STORE=table needs AzureWebJobsStorage \\(a connection string, "
        "or AzureWebJobsStorage__accountName for the managed identity\\)",
    ):
        open_run_state_store(Settings(run_state_store="table"))
