"""The mount index: the same answers as the longest-prefix rule, at the cost of the name's length."""

from __future__ import annotations

from olparser.naming import MountPoint
from olparser.naming.mounts import MountIndex, MountMemo, mount_index, resolve_mount

MOUNTS = (
    MountPoint("/mnt/x/", "abfss://x@xsa.dfs.core.windows.net/"),
    MountPoint("/mnt/x/y", "abfss://y@ysa.dfs.core.windows.net/sub"),
    MountPoint("/mnt/x/y", "abfss://second@ysa.dfs.core.windows.net/"),
    MountPoint("/", "abfss://root@r.dfs.core.windows.net/"),
    MountPoint("  /mnt/spaced/  ", " abfss://s@s.dfs.core.windows.net/ "),
)


def test_the_deepest_mount_on_the_path_wins() -> None:
    assert mount_index(MOUNTS).find("/mnt/x/y/z") == ("/mnt/x/y", MOUNTS[1])
    assert mount_index(MOUNTS).find("/mnt/x/yz") == ("/mnt/x", MOUNTS[0])
    assert mount_index(MOUNTS).find("/mnt/x") == ("/mnt/x", MOUNTS[0])
    assert mount_index(MOUNTS).find("/mnt/other") is None


def test_a_mount_point_listed_twice_resolves_to_the_first() -> None:
    assert resolve_mount("/mnt/x/y/a", MOUNTS) == ("abfss://y@ysa.dfs.core.windows.net", "/sub/a", MOUNTS[1])


def test_the_root_mount_is_never_indexed_and_spaces_are_trimmed() -> None:
    index = MountIndex(MOUNTS)
    assert len(index) == 3
    assert resolve_mount("/mnt/spaced/t", index) == ("abfss://s@s.dfs.core.windows.net", "/t", MOUNTS[4])


def test_a_tuple_is_indexed_once_and_reused() -> None:
    mounts, memo = tuple(MOUNTS), MountMemo()
    assert memo.index(mounts) is memo.index(mounts)
    assert mount_index(mounts) is not mount_index(mounts)  # without a memo: built on each call


def test_a_list_is_indexed_on_each_call_so_changes_are_seen() -> None:
    mounts = [MountPoint("/mnt/a", "abfss://a@a.dfs.core.windows.net/")]
    assert resolve_mount("/mnt/b/t", mounts) is None
    mounts.append(MountPoint("/mnt/b", "abfss://b@b.dfs.core.windows.net/"))
    assert resolve_mount("/mnt/b/t", mounts) == ("abfss://b@b.dfs.core.windows.net", "/t", mounts[1])


def test_facet_dicts_in_a_tuple_are_indexed_too() -> None:
    mounts = ({"mountPoint": "/mnt/d", "source": "abfss://d@d.dfs.core.windows.net/"},)
    assert resolve_mount("/mnt/d/t", mounts) == (
        "abfss://d@d.dfs.core.windows.net",
        "/t",
        MountPoint("/mnt/d", "abfss://d@d.dfs.core.windows.net/"),
    )


def test_double_slashes_are_not_a_parent_folder() -> None:
    assert resolve_mount("/mnt//x/a", MOUNTS) is None
