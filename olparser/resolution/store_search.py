"""Stores Purview scans whose scanned type and qualifiedName no source confirms: what a dataset of such a store is
(store, host and port, its named parts down to the object), and the discovery query that finds its scanned asset.

Pure: plain data in, plain data out. The forms read are the OpenLineage naming spec's
(website/docs/spec/naming.md, OpenLineage commit 8f02abfb, the row of each store):

| store                      | namespace                                  | name                                 |
|----------------------------|--------------------------------------------|--------------------------------------|
| Oracle                     | `oracle://{host}:{port}`                   | `{serviceName or sid}.{schema}.{table}` |
| Teradata                   | `teradata://{host}:{port}`                 | `{database}.{table}`                 |
| Db2                        | `db2://{host}:{port}`                      | `{database}.{schema}.{table}`        |
| Cassandra                  | `cassandra://{host}:{port}`                | `{keyspace}.{table}`                 |
| Google BigQuery            | `bigquery`                                 | `{project id}.{dataset}.{table}`     |
| Amazon Redshift            | `redshift://{cluster}.{region}:{port}`     | `{database}.{schema}.{table}`        |
| Amazon S3                  | `s3://{bucket}` (also `s3a://`, Hadoop's)  | `{object key}`                       |
| Microsoft Fabric Warehouse | `fabric-warehouse://{sql endpoint}[:port]` | `{database}.{schema}.{table}`        |

Not knowing the scanner's layout, resolution asks the catalog what it holds: a discovery query filtered by the
store's Purview `assetType` (any entity type of that source) with the object's name as keywords, and it accepts the
one hit whose qualifiedName holds the dataset's parts in order, each as a whole word, the object last (host, then
database or service, schema, object; a Redshift host is its cluster, then its region, as an endpoint
`{cluster}.{id}.{region}.redshift.amazonaws.com` names them; an S3 key whole, after its bucket's host name). The port is not required: a scanner may leave it out.
Host names match in any case; identifiers as the store treats them (`case_insensitive`). None or several such hits:
nothing is linked and the dataset stays the connector's placeholder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from olparser.resolution.model import HOST, IPART, KEY, PART, Candidate, Search, Shape, shape_text

LEARN = "Microsoft Learn, Supported data sources and file types (microsoft-purview-connector-overview)"
SPEC_EXAMPLE = "Data Map API 2023-09-01 example Discovery_Query_AssetType"


@dataclass(frozen=True)
class Store:
    """A store found by search: its name, the Purview `assetType` names of its source (and where they are from),
    the names of the parts its dataset names hold, whether its identifiers are case-insensitive."""

    name: str
    asset_types: tuple[str, ...]
    asset_type_source: str
    parts: tuple[str, ...]
    case_insensitive: bool


ORACLE = Store("Oracle", ("Oracle",), LEARN, ("service", "schema", "table"), True)  # unquoted: upper-cased
TERADATA = Store("Teradata", ("Teradata",), f"{SPEC_EXAMPLE}; {LEARN}", ("database", "table"), True)
# Learn's overview spells the source "Db2"; public Purview code spells the source "DB2": both are asked
DB2 = Store("Db2", ("Db2", "DB2"), LEARN, ("database", "schema", "table"), True)
CASSANDRA = Store("Cassandra", ("Cassandra",), LEARN, ("keyspace", "table"), True)  # unquoted: lower-cased
BIGQUERY = Store("Google BigQuery", ("Google BigQuery",), LEARN, ("project", "dataset", "table"), False)
REDSHIFT = Store("Amazon Redshift", ("Amazon Redshift",), LEARN, ("database", "schema", "table"), True)
S3 = Store("Amazon S3", ("Amazon S3",), f"{SPEC_EXAMPLE}; {LEARN}", ("key",), False)  # keys are case-sensitive
# Fabric Warehouse's default collation (Latin1_General_100_BIN2_UTF8) is case-sensitive
FABRIC_WAREHOUSE = Store(
    "Microsoft Fabric Warehouse", ("Microsoft Fabric",), LEARN, ("database", "schema", "table"), False
)

# namespace prefix -> store
STORES: dict[str, Store] = {
    "oracle": ORACLE,
    "teradata": TERADATA,
    "db2": DB2,
    "cassandra": CASSANDRA,
    "bigquery": BIGQUERY,
    "redshift": REDSHIFT,
    "s3": S3,
    "s3a": S3,
    "fabric-warehouse": FABRIC_WAREHOUSE,
}

_NAMESPACE = re.compile(r"^([A-Za-z0-9-]+)://([^/:?#@\s]+)(?::(\d+))?/?$")


@dataclass(frozen=True)
class StoreDataset:
    """What a dataset of a searched store is: the store, its host (None for BigQuery, whose namespace names none)
    and port, and its named parts in order, the object last."""

    store: Store
    host: str | None
    port: int | None
    parts: tuple[tuple[str, str], ...]  # (what, value), e.g. ("schema", "SALES")

    @property
    def object_name(self) -> str:
        return self.parts[-1][1]

    def host_parts(self) -> Shape:
        """The host as the scanner's qualifiedName is expected to hold it, first (after the scheme's `//`): a Redshift
        host is its cluster, then its region; any other host is itself."""
        if self.host is None:
            return ()
        if self.store is REDSHIFT and "." in self.host:
            cluster, region = self.host.split(".", 1)
            return ((HOST, cluster), (IPART, region))
        return ((HOST, self.host),)

    def shape(self) -> Shape:
        """The parts a hit's qualifiedName must hold, in order, each a whole word, the object last; an S3 key right
        after its bucket's host name (`s3://{bucket}/{key}`, `https://{bucket}.s3.amazonaws.com/{key}`)."""
        if self.store is S3:
            return (*self.host_parts(), (KEY, self.object_name))
        ident = IPART if self.store.case_insensitive else PART
        return (*self.host_parts(), *((ident, value) for _, value in self.parts))

    def keywords(self) -> str:
        """The object's name (an S3 key's last segment: a file's name)."""
        return self.object_name.rsplit("/", 1)[-1]


def store_dataset(namespace: str, name: str) -> StoreDataset | None:
    """The dataset as its store names it, or None when the namespace is not one of `STORES` in the naming spec's
    form, or the name has not the store's number of parts."""
    namespace, name = namespace.strip(), name.strip()
    if namespace.lower() == "bigquery":
        store, host, port = BIGQUERY, None, None
    else:
        match = _NAMESPACE.match(namespace)
        if match is None or match.group(1).lower() not in STORES or match.group(1).lower() == "bigquery":
            return None
        store, host = STORES[match.group(1).lower()], match.group(2).lower()
        port = int(match.group(3)) if match.group(3) else None
    if store is S3:
        key = name.lstrip("/")
        return StoreDataset(store, host, port, (("key", key),)) if key and not key.endswith("/") else None
    values = [part.strip().strip('"`[]') for part in name.split(".")]
    if len(values) != len(store.parts) or not all(values):
        return None
    return StoreDataset(store, host, port, tuple(zip(store.parts, values, strict=True)))


def store_search_candidates(namespace: str, name: str) -> list[Candidate]:
    """The search for the scanned asset of a dataset of a store in `STORES` (see the module docstring), or []."""
    dataset = store_dataset(namespace, name)
    if dataset is None:
        return []
    store = dataset.store
    shape = dataset.shape()
    search = Search("", dataset.keywords(), shape, asset_types=store.asset_types)
    origin = f"{store.name} scan (search: assetType {' or '.join(store.asset_types)}, the dataset's parts in order)"
    return [Candidate("", shape_text(shape), origin, search)]
