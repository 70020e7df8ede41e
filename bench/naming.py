"""Mappings per second of the default config on one core: the 30 reference vectors plus 12,000 generated datasets.

The generated mix covers every source family the default config knows (storage, SQL 0.x and 1.x, Postgres, MySQL,
Kusto, Cosmos DB, Snowflake, Hive, DBFS mounts) and unmatched sources, over a realistic number of distinct accounts
and servers (namespaces repeat; names mostly do not). Prints the median of several rounds, warm (per-namespace plans
built) and cold (a fresh engine, every namespace seen for the first time).
"""

from __future__ import annotations

import json
import random
import statistics
import time

from bench import MAPPINGS_PATH
from olparser.naming import MappingEngine, MountPoint, mounts_from_facet
from olparser.settings import PROJECT_ROOT

VECTORS = PROJECT_ROOT.parent / "shared" / "vectors"
WORKSPACE = "adb-1234567890123456.7.azuredatabricks.net"
ROUNDS = 7
GENERATED = 12_000

Case = tuple[str, str, tuple[MountPoint, ...]]


def reference_cases() -> list[Case]:
    mounts = mounts_from_facet(json.loads((VECTORS / "mount_points.json").read_text()))
    cases = json.loads((VECTORS / "qn_cases.json").read_text())["cases"]
    return [(c["namespace"], c["name"], mounts) for c in cases]


def generated_cases(count: int, seed: int = 7) -> list[Case]:
    rnd = random.Random(seed)
    accounts = [f"lake{i:02d}" for i in range(12)]
    servers = [f"srv{i:02d}" for i in range(8)]
    mounts = tuple(MountPoint(f"/mnt/{a}/", f"abfss://data@{a}.dfs.core.windows.net/") for a in accounts[:6])

    def word() -> str:
        return "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz_") for _ in range(rnd.randint(4, 10)))

    def path() -> str:
        return "/".join(word() for _ in range(rnd.randint(1, 4)))

    families = [
        lambda: (
            f"abfss://{word()[:3]}@{rnd.choice(accounts)}.dfs.core.windows.net",
            rnd.choice(("", "/")) + path(),
            (),
        ),
        lambda: (f"abfs://raw@{rnd.choice(accounts)}.dfs.core.windows.net", "", ()),
        lambda: (f"abfss://raw@{rnd.choice(accounts)}.blob.core.windows.net", path(), ()),
        lambda: (f"wasbs://c@{rnd.choice(accounts)}.blob.core.windows.net", "/" + path(), ()),
        lambda: (
            f"sqlserver://{rnd.choice(servers)}.database.windows.net:1433;database=db;encrypt=true;",
            f"{word()}.{word()}",
            (),
        ),
        lambda: (f"sqlserver://{rnd.choice(servers)}.database.windows.net:1433", f"db.{word()}.{word()}", ()),
        lambda: (f"sqlserver://{rnd.choice(servers)}.sql.azuresynapse.net:1433", f"pool.{word()}", ()),
        lambda: (f"postgres://{rnd.choice(servers)}.postgres.database.azure.com:5432", f"app.public.{word()}", ()),
        lambda: (f"postgresql://10.0.0.{rnd.randint(1, 9)}:5432/app", word(), ()),
        lambda: (f"mysql://{rnd.choice(servers)}.mysql.database.azure.com:3306", f"shop.{word()}", ()),
        lambda: (f"azurekusto://{rnd.choice(servers)}.westeurope.kusto.windows.net/telemetry", word(), ()),
        lambda: (f"azurecosmos://{rnd.choice(accounts)}.documents.azure.com/dbs/shop", f"/colls/{word()}", ()),
        lambda: (f"snowflake://org-{rnd.choice(servers)}", f"DB.PUBLIC.{word().upper()}", ()),
        lambda: ("dbfs", f"/user/hive/warehouse/{word()}.db/{word()}", ()),
        lambda: ("dbfs", f"/mnt/{rnd.choice(accounts[:6])}/{path()}", mounts),
        lambda: (f"kafka://broker{rnd.randint(1, 3)}:9092", word(), ()),
    ]
    return [rnd.choice(families)() for _ in range(count)]


def rate(engine: MappingEngine, cases: list[Case]) -> float:
    mapper = engine.map
    start = time.perf_counter()
    for namespace, name, mounts in cases:
        mapper(namespace, name, mounts=mounts, workspace_url=WORKSPACE)
    return len(cases) / (time.perf_counter() - start)


def main() -> None:
    cases = reference_cases() + generated_cases(GENERATED)
    engine = MappingEngine.from_path(MAPPINGS_PATH)
    matched = sum(engine.map(ns, n, mounts=m, workspace_url=WORKSPACE).matched for ns, n, m in cases)
    cold = [rate(MappingEngine.from_path(MAPPINGS_PATH), cases) for _ in range(ROUNDS)]
    warm = [rate(engine, cases) for _ in range(ROUNDS)]
    print(f"default config, {len(engine.rules)} rules, {len(cases)} datasets ({matched} matched), {ROUNDS} rounds")
    print(f"  warm: median {statistics.median(warm):,.0f} mappings/s")
    print(f"  cold: median {statistics.median(cold):,.0f} mappings/s (fresh engine; name cache may be warm)")


if __name__ == "__main__":
    main()
