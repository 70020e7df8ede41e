"""The upload log line's counts add up (issue 36: "2 entities: 2 created, 2 updated"): each entity is counted once,
created before updated, and one the catalog wrote without being sent (a column) counts in the whole."""

from olparser.lineage.plan import UploadReport

A, B, C, COLUMN = ("t", "a"), ("t", "b"), ("t", "c"), ("column", "a#x")


def test_an_entity_created_then_updated_counts_as_created():
    report = UploadReport(created=(A, B), updated=(A, B))  # a second request gave both a lineage edge
    assert report.counts([A, B]) == "2 entities: 2 created, 0 updated, 0 unchanged, 0 referenced"


def test_unchanged_and_nested_entities_are_counted():
    report = UploadReport(created=(A, COLUMN), updated=(B,), referenced=(("scanned", "s"),))
    assert report.counts([A, B, C]) == "4 entities: 2 created, 1 updated, 1 unchanged, 1 referenced"
