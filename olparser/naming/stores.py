"""Stores that no shipped rule names, on purpose: what an unmatched dataset of such a store says (`MappingEngine`'s
unmatched reason, so `qn-tester`, the run's `unmatched` list and the logs say it) and what
docs/guides/producers-and-names.md documents (tools/naming_coverage.py reads the same table).

Two kinds (Microsoft Learn, "Supported data sources and file types", microsoft-purview-connector-overview):
- no Purview scanner registers the store (Kafka and Event Hubs topics, Google Cloud Storage, HDFS, ...);
- Purview scans it, but no source we have confirms the scanner's type and qualifiedName (Oracle, Teradata, ...): the
  connector does not guess the form; resolution asks the catalog instead (olparser/resolution/store_search.py: the
  source's `assetType` and the object's name, the one hit holding the dataset's parts in order) and the dataset
  stays the placeholder only when nothing, or more than one asset, is found. A user who knows the form adds a rule.
Either way the dataset is written as the connector's readable placeholder, with its columns, until it is linked, and
lineage through it is kept.
"""

from __future__ import annotations

GUIDE = "docs/guides/producers-and-names.md"
NOT_SCANNED = "no Purview scanner registers it"
UNCONFIRMED = "Purview scans it, but no source confirms its type and qualifiedName"
SEARCHED = f"{UNCONFIRMED}: found by search (its assetType and the object's name)"
TEMPORARY = "a temporary dataset, not a stored asset"

# namespace prefix (the text before `//`, as the rules' `prefix` token; the whole namespace when it has none)
# -> (store, why no rule names it)
STORES: dict[str, tuple[str, str]] = {
    "kafka": ("Kafka (also Event Hubs' Kafka endpoint)", NOT_SCANNED),
    "gs": ("Google Cloud Storage", NOT_SCANNED),
    "hdfs": ("HDFS", NOT_SCANNED),
    "dbfs": ("DBFS outside the Hive warehouse", NOT_SCANNED),
    "file": ("a file system", NOT_SCANNED),
    "trino": ("Trino", NOT_SCANNED),
    "awsathena": ("Amazon Athena", NOT_SCANNED),
    "pubsub": ("Google Pub/Sub", NOT_SCANNED),
    "inmemory": ("in memory", TEMPORARY),
    "oracle": ("Oracle", UNCONFIRMED),
    "teradata": ("Teradata", UNCONFIRMED),
    "db2": ("Db2", UNCONFIRMED),
    "cassandra": ("Cassandra", UNCONFIRMED),
    "bigquery": ("Google BigQuery", UNCONFIRMED),
    "redshift": ("Amazon Redshift", UNCONFIRMED),
    "s3": ("Amazon S3", UNCONFIRMED),
    "s3a": ("Amazon S3", UNCONFIRMED),
    "fabric-warehouse": ("Microsoft Fabric Warehouse", UNCONFIRMED),
}


def store_note(prefix: str) -> str | None:
    """Why no shipped rule names datasets of this namespace prefix, or None for a prefix not listed."""
    known = STORES.get(prefix.lower())
    if known is None:
        return None
    store, why = known
    if why == UNCONFIRMED:
        return (
            f"{store}: {why}, so it is written as a placeholder and linked to the scanned asset a search finds "
            f"(see {GUIDE})"
        )
    return f"{store}: {why}, so it stays a placeholder (see {GUIDE})"
