"""Every type the shipped rules write is a type the embedded catalog knows, as Purview's scanners do: otherwise every
run mapped by such a rule would be rejected (ATLAS-400-00-014) when the page or the tests use the embedded catalog."""
from __future__ import annotations

import json

from olparser.settings import DEFAULT_MAPPINGS_PATH
from tools.catalog.builtin_types import builtin_typedefs


def test_the_embedded_catalog_knows_every_type_the_default_rules_write():
    rules = json.loads(DEFAULT_MAPPINGS_PATH.read_text(encoding="utf-8"))
    rules = rules["olToPurviewMappings"] if isinstance(rules, dict) else rules
    written = {rule["purviewDataType"] for rule in rules}
    known = {typedef["name"] for typedef in builtin_typedefs()}
    assert sorted(written - known) == []
    assert {"azure_blob_container", "mysql_table"} <= written
