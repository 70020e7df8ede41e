"""DBFS canonical paths and /mnt resolution against the mount points of the environment-properties facet."""

from __future__ import annotations

import json

import pytest

from olparser.naming import MountPoint, mounts_from_facet
from olparser.naming import mounts as mounts_module
from olparser.naming.mounts import MountMemo, canonical_dbfs, location_dataset, resolve_mount

MOUNTS = (
    MountPoint("/mnt/x/", "abfss://x@xsa.dfs.core.windows.net/"),
    MountPoint("/mnt/x/y", "abfss://y@ysa.dfs.core.windows.net/"),
    MountPoint("/mnt/x2/", "abfss://myx2@ysa.dfs.core.windows.net/subdir/"),
    MountPoint("/mnt/raw", "wasbs://raw@sa.blob.core.windows.net"),
    MountPoint("/", "wasbs://root@dbstorage.blob.core.windows.net/123"),
)


@pytest.mark.parametrize(
    "name, namespace, resolved_name, mount_point",
    [
        ("/mnt/x/abc", "abfss://x@xsa.dfs.core.windows.net", "/abc", "/mnt/x/"),
        ("/mnt/x/y/abc", "abfss://y@ysa.dfs.core.windows.net", "/abc", "/mnt/x/y"),
        ("/mnt/x/yz/abc", "abfss://x@xsa.dfs.core.windows.net", "/yz/abc", "/mnt/x/"),
        ("/mnt/x/y", "abfss://y@ysa.dfs.core.windows.net", "/", "/mnt/x/y"),
        ("/mnt/x/y/", "abfss://y@ysa.dfs.core.windows.net", "/", "/mnt/x/y"),
        ("/mnt/x2/foo/bar", "abfss://myx2@ysa.dfs.core.windows.net", "/subdir/foo/bar", "/mnt/x2/"),
        ("/mnt/x2", "abfss://myx2@ysa.dfs.core.windows.net", "/subdir", "/mnt/x2/"),
        ("/mnt/raw/a", "wasbs://raw@sa.blob.core.windows.net", "/a", "/mnt/raw"),
    ],
)
def test_longest_mount_wins_and_trailing_slashes_do_not_matter(name, namespace, resolved_name, mount_point):
    ns, resolved, mount = resolve_mount(name, MOUNTS)
    assert (ns, resolved, mount.mount_point) == (namespace, resolved_name, mount_point)


@pytest.mark.parametrize("name", ["/mnt/rawdata/x", "/mnt/other", "/user/hive/warehouse/t", "/tmp/x"])
def test_paths_under_no_mount_and_the_root_mount_are_not_resolved(name):
    assert resolve_mount(name, MOUNTS) is None


def test_facet_style_dicts_are_accepted_as_mounts(default_engine):
    mounts = [{"mountPoint": "/mnt/x/", "source": "abfss://x@xsa.dfs.core.windows.net/"}]
    assert (
        default_engine.map("dbfs", "/mnt/x/abc", mounts=mounts).qualified_name
        == "https://xsa.dfs.core.windows.net/x/abc"
    )


def test_no_mounts_means_no_resolution():
    assert resolve_mount("/mnt/x/abc", ()) is None


@pytest.mark.parametrize(
    "namespace, name, expected",
    [
        ("dbfs", "/mnt/a", ("dbfs", "/mnt/a")),
        ("dbfs", "mnt/a", ("dbfs", "/mnt/a")),
        ("dbfs", "dbfs:/mnt/a", ("dbfs", "/mnt/a")),
        ("dbfs", "dbfs:/user/hive/warehouse/t", ("dbfs", "/user/hive/warehouse/t")),
        ("file", "/dbfs/mnt/a", ("dbfs", "/mnt/a")),
        ("file", "/tmp/a", ("file", "/tmp/a")),
        ("abfss://c@a.dfs.core.windows.net", "mnt/a", ("abfss://c@a.dfs.core.windows.net", "mnt/a")),
    ],
)
def test_canonical_dbfs_forms(namespace, name, expected):
    assert canonical_dbfs(namespace, name) == expected


def test_engine_resolves_mounts_for_dbfs_and_file_namespaces(default_engine):
    expected = "https://xsa.dfs.core.windows.net/x/abc"
    for namespace, name in [
        ("dbfs", "/mnt/x/abc"),
        ("dbfs", "mnt/x/abc"),
        ("dbfs", "dbfs:/mnt/x/abc"),
        ("file", "/dbfs/mnt/x/abc"),
        ("file", "/mnt/x/abc"),
    ]:
        assert default_engine.map(namespace, name, mounts=MOUNTS).qualified_name == expected, (namespace, name)


def test_mounts_from_the_facet_in_every_accepted_shape():
    entries = [
        {"mountPoint": "/mnt/a", "source": "abfss://a@s.dfs.core.windows.net/"},
        {"MountPoint": "/mnt/b", "Source": "wasbs://b@s.blob.core.windows.net"},
    ]
    expected = (
        MountPoint("/mnt/a", "abfss://a@s.dfs.core.windows.net/"),
        MountPoint("/mnt/b", "wasbs://b@s.blob.core.windows.net"),
    )
    assert mounts_from_facet(entries) == expected
    assert mounts_from_facet({"mountPoints": entries}) == expected
    assert mounts_from_facet({"_producer": "p", "environment-properties": {"mountPoints": entries}}) == expected
    assert mounts_from_facet(list(expected)) == expected


def test_a_mount_list_sent_again_is_read_once_and_each_list_is_read_as_sent(monkeypatch):
    monkeypatch.setattr(mounts_module, "READ_LISTS_SIZE", 2)
    memo = MountMemo()
    first = memo.read([{"mountPoint": "/mnt/a", "source": "abfss://a@s.dfs.core.windows.net/"}])
    # equal lists from other events are the same tuple (so its index is built once); lists that differ in a way
    # Python's equality or orjson's nulls would hide are read each as sent
    assert memo.read([{"mountPoint": "/mnt/a", "source": "abfss://a@s.dfs.core.windows.net/"}]) is first
    assert [
        memo.read(value)
        for value in (
            [{"mountPoint": "/mnt/a", "source": "abfss://b@s.dfs.core.windows.net/"}],
            [{"mountPoint": "/mnt/a", "source": None}, {"mountPoint": "/mnt/c", "source": "s3://c"}],
            [{"mountPoint": "/mnt/a", "source": float("nan")}, {"mountPoint": "/mnt/d", "source": "s3://d"}],
            [MountPoint("/mnt/a", "abfss://a@s.dfs.core.windows.net/")],
            [{"mount_point": "/mnt/a", "source": "abfss://a@s.dfs.core.windows.net/"}],
        )
    ] == [
        (MountPoint("/mnt/a", "abfss://b@s.dfs.core.windows.net/"),),
        (MountPoint("/mnt/c", "s3://c"),),
        (MountPoint("/mnt/d", "s3://d"),),
        first,
        (),
    ]
    assert len(memo._read) == 1  # emptied when it held 2: the last list read alone


@pytest.mark.parametrize(
    "value", [None, "x", {}, {"environment-properties": {}}, [{"mountPoint": "/mnt/a"}, 5, {"source": "s"}]]
)
def test_mounts_from_facet_ignores_what_is_not_a_mount(value):
    assert mounts_from_facet(value) == ()


def test_mounts_from_a_real_databricks_event(shared_dir):
    event = json.loads(
        (shared_dir / "openlineage/events/accelerator__UnitTestColData_CompleteOlColMessage.json").read_text()
    )
    mounts = mounts_from_facet(event["run"]["facets"]["environment-properties"])
    assert MountPoint("/mnt/raw", "abfss://raw@aaiarchdesignpurviewadls.dfs.core.windows.net/") in mounts
    assert len(mounts) == 8


@pytest.mark.parametrize(
    "location, expected",
    [
        (
            "abfss://raw@acct.dfs.core.windows.net/landing/orders/",
            ("abfss://raw@acct.dfs.core.windows.net", "landing/orders"),
        ),
        ("abfs://raw@acct.dfs.core.windows.net/x", ("abfss://raw@acct.dfs.core.windows.net", "x")),
        ("wasb://c@acct.blob.core.windows.net/p", ("wasbs://c@acct.blob.core.windows.net", "p")),
        ("ABFSS://raw@acct.dfs.core.windows.net", ("abfss://raw@acct.dfs.core.windows.net", "")),
        ("s3://bucket/key/part", ("s3://bucket", "key/part")),
        ("dbfs:/mnt/raw/x", ("dbfs", "/mnt/raw/x")),
        ("/Volumes/main/sales/files/a.csv", ("dbfs", "/Volumes/main/sales/files/a.csv")),
        ("file:/tmp/out", ("file", "/tmp/out")),
        ("file:///dbfs/mnt/y", ("dbfs", "/mnt/y")),
    ],
)
def test_a_location_is_named_as_openlineage_spark_names_it(location, expected):
    assert location_dataset(location) == expected
