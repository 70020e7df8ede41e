"""Purview's resource-set rules on one core (olparser.resolution.resource_sets, the default rule config):

- `resource_set_names` per folder a Spark job wrote (what the connector derives for each output path it resolves),
  over 5,000 generated lake folders (plain, numbered, dated, partitioned, GUID-named);
- `group_files` per file, over a generated lake of 20,000 files (Spark and Delta outputs with bookkeeping, partitioned
  tables, logs by date and locale, single files), as `ol2purview catalog scan` groups them.

Prints the median of several rounds.
"""

from __future__ import annotations

import random
import statistics
import time
import uuid

from olparser.resolution.resource_sets import ResourceSetRules, default_account_config, group_files, resource_set_names

ROUNDS = 7
FOLDERS = 5_000
FILES = 20_000
LAKE = "https://contosolake.dfs.core.windows.net/silver"


def _folders(count: int, seed: int = 3) -> list[str]:
    rnd = random.Random(seed)
    shapes = [
        lambda: f"{LAKE}/gold/orders_{rnd.randint(1, 99)}",
        lambda: f"{LAKE}/bronze/events/{rnd.randint(2019, 2025)}/{rnd.randint(1, 12):02d}/{rnd.randint(1, 28):02d}",
        lambda: f"{LAKE}/sales/Year={rnd.randint(2019, 2025)}/Month={rnd.randint(1, 12)}",
        lambda: (
            f"{LAKE}/__unitystorage/catalogs/{uuid.UUID(int=rnd.getrandbits(128))}/tables/"
            f"{uuid.UUID(int=rnd.getrandbits(128))}"
        ),
        lambda: f"{LAKE}/curated/customer_dim",
    ]
    return [rnd.choice(shapes)() for _ in range(count)]


def _files(count: int, seed: int = 5) -> list[str]:
    rnd = random.Random(seed)
    files: list[str] = []
    while len(files) < count:
        table = f"{LAKE}/t{rnd.randint(0, 400)}"
        shape = rnd.randint(0, 3)
        part = f"part-{rnd.randint(0, 199):05d}-{uuid.UUID(int=rnd.getrandbits(128))}-c000.snappy.parquet"
        if shape == 0:
            files += [f"{table}/{part}", f"{table}/.{part}.crc", f"{table}/_SUCCESS"]
        elif shape == 1:
            files += [
                f"{table}/region=r{rnd.randint(0, 9)}/{part}",
                f"{table}/_delta_log/{rnd.randint(0, 99):020d}.json",
            ]
        elif shape == 2:
            files.append(
                f"{LAKE}/logs/{rnd.choice(('en_us', 'de_de', 'fr_fr'))}/{rnd.randint(2019, 2025)}/"
                f"{rnd.randint(1, 12):02d}/{rnd.randint(1, 28):02d}/app_{rnd.randint(0, 999)}.json"
            )
        else:
            files.append(f"{LAKE}/docs/note_{rnd.randint(0, 50)}.docx")
    return files[:count]


def _median(work, rounds: int = ROUNDS, cold: bool = False) -> float:
    """Median seconds of `work(rules)`; cold: fresh rules each round (no generalised segment remembered yet)."""
    times = []
    warm = ResourceSetRules.from_account_config(default_account_config())
    for _ in range(rounds):
        rules = ResourceSetRules.from_account_config(default_account_config()) if cold else warm
        start = time.perf_counter()
        work(rules)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    folders = _folders(FOLDERS)
    for label, cold in (("cold", True), ("warm", False)):
        seconds = _median(lambda rules: [resource_set_names(f, rules) for f in folders], cold=cold)
        print(
            f"resource_set_names ({label}): {FOLDERS / seconds:,.0f} folders/s ({seconds / FOLDERS * 1e6:.1f} µs "
            f"each, median of {ROUNDS})"
        )
    files = _files(FILES)
    seconds = _median(lambda rules: group_files(files, rules), rounds=3, cold=True)
    assets = group_files(files, ResourceSetRules.default())
    print(
        f"group_files (cold): {FILES / seconds:,.0f} files/s ({FILES:,} files -> {len(assets):,} assets in "
        f"{seconds * 1000:.0f} ms, median of 3)"
    )


if __name__ == "__main__":
    main()
