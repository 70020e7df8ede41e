"""A tiny mapping engine with MappingEngine's `map` signature, so that the entity builder's tests do not depend on the
default rule file (a fake boundary; test_default_rules.py runs the real engine with the one rule file)."""

from __future__ import annotations

import re

from olparser.naming import MappingResult
from olparser.naming.mounts import MountMemo


class FakeEngine:
    """abfss -> azure_datalake_gen2_path, hive:// `db.table` -> hive_table; anything else is unmatched."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.datasets_met: dict = {}  # what the lineage build remembers with an engine (MappingEngine.datasets_met)
        self.mount_memo = MountMemo()

    def map(self, namespace, name, *, mounts=(), workspace_url=None):
        self.calls.append((namespace, name, mounts, workspace_url))
        adls = re.match(r"^abfss?://([^@]+)@([^/]+\.dfs\.core\.windows\.net)(/.*)?$", namespace)
        if adls:
            path = "/".join(p for p in ((adls.group(3) or "").strip("/"), name.strip("/")) if p)
            return MappingResult(f"https://{adls.group(2)}/{adls.group(1)}/{path}", "azure_datalake_gen2_path", "adls")
        hive = re.match(r"^hive://([^:/]+)", namespace)
        if hive and name.count(".") == 1:
            return MappingResult(f"{name}@{hive.group(1)}", "hive_table", "hive")
        return MappingResult(None, None, None, f"no rule for {namespace}")
