"""`ol2purview catalog scan PATH --account NAME --container NAME`: a local folder registered as Purview's ADLS Gen2
(or, with `--blob`, Blob) scanner would register it, so that resource sets can be tried locally and tested.

The folder stands for the container (or for `--prefix DIR` inside it). Its files are named as the scanner names
them (`https://{account}.dfs.core.windows.net/{container}/{path}`, blob: `.blob.core.windows.net`) and grouped by
`olparser.resolution.resource_sets.group_files` — the same rules the connector uses to predict a Spark folder's
resource set — under the rules of `--rules FILE` (an account rule config, as `GET resourceSetRuleConfigs/
defaultResourceSetRuleConfig` answers), else the catalog's own (the embedded catalog serves that route), else
Purview's defaults. Registered through the Atlas API in bulk: the filesystem or container, the resource sets
(`partitionCount`, `totalSizeBytes`, `modifiedTime`) and the single files (`size`, `modifiedTime`). A second scan
of the same files changes nothing; a folder that gained a partition updates its resource set. It never deletes, and
it refuses a real Purview: there, run Purview's own scan.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import requests

from olparser.adapters.catalog import make_atlas_client
from olparser.adapters.catalog.errors import CatalogHttpError
from olparser.jsontypes import JSON
from olparser.resolution.resource_sets import (
    CONTAINER_TYPES,
    ResourceSetRules,
    ScannedAsset,
    group_files,
    split_storage_path,
)
from olparser.settings import Settings

from ..catalog_options import NoCatalog, add_target_arguments, catalog_target
from .account import CONFIG_PATH

_ACCOUNT = re.compile(r"[a-z0-9]{3,24}")
_CONTAINER = re.compile(r"(?=.{3,63}$)[a-z0-9](?:[a-z0-9]|-(?!-))*[a-z0-9]")
_ATLAS_SUFFIXES = ("/datamap/api/atlas/v2", "/catalog/api/atlas/v2", "/api/atlas/v2")
RULES_API_VERSION = "2019-11-01-preview"


@dataclass(frozen=True)
class LocalFile:
    size: int
    modified_ms: int


def local_files(folder: Path) -> dict[str, LocalFile]:
    """Every regular file below `folder` (hidden ones too: Spark's bookkeeping), by its posix path relative to it."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            stat = path.stat()
            found[path.relative_to(folder).as_posix()] = LocalFile(stat.st_size, int(stat.st_mtime * 1000))
    return found


def container_name(account: str, container: str, *, blob: bool) -> str:
    service = "blob" if blob else "dfs"
    return f"https://{account}.{service}.core.windows.net/{container}"


def scan_entities(container_qn: str, assets: Sequence[ScannedAsset], files: dict[str, LocalFile]) -> list[JSON]:
    """The Atlas entities the scanner registers: the container first, then each resource set and single file."""
    path = split_storage_path(container_qn + "/x")
    assert path is not None, container_qn
    entities: list[JSON] = [
        {
            "typeName": CONTAINER_TYPES[path.path_type],
            "attributes": {"qualifiedName": container_qn, "name": container_qn.rsplit("/", 1)[1]},
        }
    ]
    for asset in assets:
        members = [files[qn] for qn in asset.files]
        attributes: JSON = {
            "qualifiedName": asset.qualified_name,
            "name": asset.name,
            "modifiedTime": max(f.modified_ms for f in members),
        }
        if asset.is_resource_set:
            attributes.update(partitionCount=asset.partition_count, totalSizeBytes=sum(f.size for f in members))
        else:
            attributes.update(isFile=True, size=members[0].size)
        entities.append({"typeName": asset.type_name, "attributes": attributes})
    return entities


def _chunks(items: Sequence[JSON], size: int) -> Iterable[Sequence[JSON]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _catalog_rules(atlas_url: str, auth: tuple[str, str] | None, timeout: float) -> ResourceSetRules | None:
    """The catalog's own resource-set rule config (the account API beside its Atlas API), or None."""
    root = atlas_url
    for suffix in _ATLAS_SUFFIXES:
        if root.endswith(suffix):
            root = root[: -len(suffix)]
            break
    try:
        answer = requests.get(root + CONFIG_PATH, params={"api-version": RULES_API_VERSION}, auth=auth, timeout=timeout)
        return ResourceSetRules.from_account_config(answer.json()) if answer.status_code == 200 else None
    except (requests.RequestException, ValueError):
        return None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", type=Path, help="the local folder (Spark/Delta output, any files) to scan")
    parser.add_argument("--account", required=True, help="the storage account name the files are named under")
    parser.add_argument("--container", required=True, help="the filesystem (ADLS) or container (blob)")
    parser.add_argument("--prefix", default="", help="where PATH sits inside the container (default: its root)")
    parser.add_argument(
        "--blob", action="store_true", help="scan as the Blob scanner (https://{account}.blob.core.windows.net/...)"
    )
    parser.add_argument(
        "--rules",
        type=Path,
        metavar="FILE",
        help="an account's resource-set rule config (JSON, as GET defaultResourceSetRuleConfig "
        "answers); default: the catalog's own, else Purview's defaults",
    )
    parser.add_argument(
        "--collection",
        metavar="NAME",
        help="the collection (its name) the scan registers into, as a Purview scan registers a "
        "source's assets in the source's collection (default: the root)",
    )
    add_target_arguments(parser, catalog=True)


def _fail(message: str, code: int) -> int:
    print(f"ol2purview catalog scan: {message}", file=sys.stderr)
    return code


def run(args: argparse.Namespace) -> int:
    if not args.path.is_dir():
        return _fail(f"{args.path} is not a folder", 2)
    if not _ACCOUNT.fullmatch(args.account):
        return _fail(f"--account must be 3-24 lowercase letters or digits, got {args.account!r}", 2)
    if not _CONTAINER.fullmatch(args.container):
        return _fail(
            "--container must be 3-63 lowercase letters, digits or single hyphens, starting and ending with "
            f"a letter or digit, got {args.container!r}",
            2,
        )
    settings = Settings.from_env()
    try:
        target = catalog_target(args, settings)
    except (NoCatalog, ValueError) as exc:
        return _fail(str(exc), 2)
    if target.kind == "purview" or not target.endpoint:
        return _fail(
            "it writes what Purview's scanners would and refuses a real Purview (run Purview's scan there); "
            "point it at an Atlas or the embedded catalog with --atlas-url",
            2,
        )
    auth = (target.username, target.password or "") if target.username else None
    if args.rules is not None:
        try:
            rules, source = ResourceSetRules.from_account_config(json.loads(args.rules.read_text("utf-8"))), args.rules
        except (OSError, ValueError) as exc:
            return _fail(f"--rules {args.rules}: {exc}", 2)
    else:
        found = _catalog_rules(target.endpoint, auth, settings.catalog_timeout_seconds)
        rules, source = (
            (found, "the catalog's resource-set rule config")
            if found
            else (ResourceSetRules.default(), "Purview's default resource-set rules")
        )
    container_qn = container_name(args.account, args.container, blob=args.blob)
    base = "/".join([container_qn, *(p for p in args.prefix.split("/") if p)])
    files = {f"{base}/{relative}": info for relative, info in local_files(args.path).items()}
    assets = group_files(files, rules)
    entities = scan_entities(container_qn, assets, files)
    client = make_atlas_client(target, timeout=settings.catalog_timeout_seconds)
    created = updated = 0
    try:
        for chunk in _chunks(entities, settings.catalog_bulk_size):
            mutated = client.upload_bulk(list(chunk), args.collection).get("mutatedEntities") or {}
            created += len(mutated.get("CREATE") or [])
            updated += len(mutated.get("UPDATE") or [])
    except (CatalogHttpError, requests.RequestException, OSError) as exc:
        return _fail(f"{target.endpoint}: {str(exc)[:300]}", 1)
    finally:
        client.close()
    print(report(target.endpoint, source, entities, assets, created, updated))
    return 0


def report(
    endpoint: str, source: object, entities: Sequence[JSON], assets: Sequence[ScannedAsset], created: int, updated: int
) -> str:
    """The table of what was registered, and the counts."""
    width = max(len(e["typeName"]) for e in entities)
    lines = [f"registered in {endpoint} (rules: {source})", f"{'TYPE':<{width}}  {'PARTITIONS':>10}  QUALIFIED NAME"]
    for entity in entities:
        partitions = entity["attributes"].get("partitionCount", "-")
        lines.append(f"{entity['typeName']:<{width}}  {partitions:>10}  {entity['attributes']['qualifiedName']}")
    sets = [a for a in assets if a.is_resource_set]
    container = entities[0]["typeName"].rsplit("_", 1)[1]
    lines.append(
        f"1 {container}, {_count(len(sets), 'resource set')} ({_count(sum(len(a.files) for a in sets), 'file')}), "
        f"{_count(len(assets) - len(sets), 'single file')}: {created} created, {updated} updated, "
        f"{len(entities) - created - updated} unchanged"
    )
    return "\n".join(lines)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
