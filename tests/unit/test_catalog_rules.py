"""The pure catalog rules (olparser/catalog_rules.py): which relations are active, the in-use test, the clean-up
after a delete (against the SQLite run-state store's interim registry), and the retry table every caller reads."""

from __future__ import annotations

from pathlib import Path

from olparser.adapters.run_state.sqlite_store import SqliteRunStateStore
from olparser.catalog_rules import INTERACTIVE, REBUILD, REQUEST, RETRIES, Retries, forget_gone, related, used_by
from olparser.pipeline.run_writer import MAX_REBUILDS
from olparser.settings import Settings
from tools.spark.catalog import MAX_RESOLUTIONS

PATH = "azure_datalake_gen2_path"
A, B, C = ((PATH, f"https://lake.dfs.core.windows.net/raw/{n}") for n in "abc")


def _dataset() -> dict:
    return {
        "typeName": PATH,
        "relationshipAttributes": {
            "inputToProcesses": [
                {"guid": "p-reads", "typeName": "spark_process"},  # no status: active
                {"guid": "p-deleted", "entityStatus": "DELETED", "relationshipStatus": "ACTIVE"},
                {"guid": "p-dropped", "entityStatus": "ACTIVE", "relationshipStatus": "DELETED"},
                "not an object",
            ],
            "outputFromProcesses": [{"guid": "p-writes", "entityStatus": "ACTIVE", "relationshipStatus": "ACTIVE"}],
            "columns": [{"guid": "c-1"}],
        },
    }


def test_used_by_lists_the_active_processes_that_read_or_write_the_entity():
    assert [item["guid"] for item in used_by(_dataset())] == ["p-reads", "p-writes"]
    assert used_by({"typeName": PATH, "relationshipAttributes": {"inputToProcesses": None}}) == []
    assert used_by({"typeName": PATH}) == []  # read without its relationship attributes: nothing known to use it


def test_related_applies_the_same_test_to_any_relationship_attribute():
    job = {"relationshipAttributes": {"job_tasks": [{"guid": "t-1"}, {"guid": "t-2", "entityStatus": "DELETED"}]}}
    assert related(job, ("job_tasks",)) == [{"guid": "t-1"}]
    assert [item["guid"] for item in related(_dataset(), ("columns", "outputFromProcesses"))] == ["c-1", "p-writes"]


class Resolver:
    def __init__(self) -> None:
        self.forgotten: list[list[tuple[str, str]]] = []

    def forget(self, keys) -> None:
        self.forgotten.append(list(keys))


def test_forget_gone_forgets_what_is_gone_from_the_registry_and_the_resolver(tmp_path: Path):
    store = SqliteRunStateStore(tmp_path / "runs.sqlite3", ttl_seconds=3600)
    store.register_interim({key: "[]" for key in (A, B, C)})
    resolver = Resolver()

    forget_gone(store, resolver, [A, B, C], kept=[B])  # B: kept by the delete (another process uses it)

    assert store.interim_keys([A, B, C]) == {B}
    assert resolver.forgotten == [[A, C]]

    forget_gone(store, None, [B])  # no resolver: the registry only
    assert store.interim_keys([A, B, C]) == set()


def test_one_retry_table_sets_every_kind_of_catalog_work():
    assert RETRIES == {
        REQUEST: Retries(attempts=6, first_wait=0.5, max_wait=30.0, total_seconds=120.0),
        INTERACTIVE: Retries(attempts=2, first_wait=0.5, max_wait=30.0, total_seconds=120.0),
        REBUILD: Retries(attempts=5),
    }
    assert Settings().catalog_max_attempts == 6  # CATALOG_MAX_ATTEMPTS' default is a request's
    # the live write, its restore and the Spark writer resolve a plan again as often as each other
    assert MAX_REBUILDS == MAX_RESOLUTIONS == 5
