"""The catalog and the function endpoint a command-line tool talks to, chosen the same way by every tool
(`replay`, `history`, `status`, `requeue`, `prune`, `migrate`, `columns`, `typedefs`, `catalog scan`,
`spark backfill|remap|system-lineage|history`, `qn-tester lint --catalog` and `--explain --catalog`), with the same
flags, added by `add_target_arguments`:

- the data folder: `--data DIR`, else `OL2PURVIEW_DATA_DIR`, else `.data`; the `ol2purview serve` running on it (its
  `serve.json`) is what every tool falls back to;
- the catalog: `--atlas-url URL` (an Atlas v2 base such as http://127.0.0.1:21000/api/atlas/v2, or the catalog page's
  URL), with `--user` and the password from `ATLAS_PASSWORD` (a password on the command line is visible to every user
  of the machine); else the settings (`PURVIEW_ACCOUNT_NAME` with Entra ID, or `ATLAS_ENDPOINT`); else the catalog of
  the running `serve`;
- the function endpoint: `--url URL`, else the running `serve`'s; the key: `--key KEY` (or `--key=KEY`), else
  `$OL2PURVIEW_FUNCTION_KEY`, else the key that `serve` keeps in the data folder, sent only to that serve;
- the connector's ledger (`prune`, `migrate`: what the connector wrote): the run-state store of the data folder, with
  the storage of the running `serve` unless the settings name one (`ledger_settings`).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Mapping
from urllib.parse import urlsplit

from olparser.settings import Settings

if TYPE_CHECKING:  # imports loaded only by what talks to a catalog or a host (qn-tester starts fast)
    from olparser.adapters.catalog import CatalogTarget

KEY_ENV = "OL2PURVIEW_FUNCTION_KEY"
MASTER_KEY_ENV = "OL2PURVIEW_MASTER_KEY"
ATLAS_PATH = "/api/atlas/v2"


class NoCatalog(ValueError):
    """No catalog could be chosen; the message says how to name one."""


class NoEndpoint(ValueError):
    """No function endpoint could be chosen; the message says how to name one."""


def add_target_arguments(
    parser: argparse.ArgumentParser, *, catalog: bool = False, endpoint: bool = False, master_key: bool = False
) -> None:
    """`--data`, and the catalog flags (`--atlas-url`, `--user`) and/or the endpoint flags (`--url`, `--key`) of the
    tools that need them; `master_key`: `--key` is the master key (admin endpoints)."""
    group = parser.add_argument_group("where (default: the `ol2purview serve` running on the data folder)")
    group.add_argument(
        "--data", metavar="DIR", help="the local host's data folder (default: OL2PURVIEW_DATA_DIR or .data)"
    )
    if catalog:
        group.add_argument(
            "--atlas-url",
            metavar="URL",
            help="an Atlas v2 base URL, e.g. http://127.0.0.1:21000/api/atlas/v2 (default: "
            "PURVIEW_ACCOUNT_NAME or ATLAS_ENDPOINT, else the running serve's catalog)",
        )
        group.add_argument(
            "--user",
            help="basic-auth user for --atlas-url (default: ATLAS_USERNAME); the password is read from ATLAS_PASSWORD",
        )
    if endpoint:
        group.add_argument(
            "--url", help="the function's base URL, e.g. https://<app>.azurewebsites.net (default: the running serve's)"
        )
        which, env = ("master key", MASTER_KEY_ENV) if master_key else ("function key", KEY_ENV)
        group.add_argument(
            "--key",
            help=f"{which} (default: ${env}, else the {which} the running serve keeps in <data>/host-keys.json)",
        )


def data_dir(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> Path:
    """The data folder named by `--data`, else by the settings."""
    given = getattr(args, "data", None)
    return Path(given).resolve() if given else Settings.from_env(env).data_dir


def atlas_base(url: str) -> str:
    """An Atlas v2 base from a URL that may be the catalog's page (`http://host:21000/`)."""
    url = url.strip().rstrip("/")
    return url + ATLAS_PATH if urlsplit(url).path in ("", "/") else url


def catalog_target(args: argparse.Namespace, settings: Settings) -> CatalogTarget:
    """The catalog named by the arguments, the settings or the running local host (in that order). Raises NoCatalog
    (or ValueError for a malformed setting) saying what to pass."""
    from olparser.adapters.catalog import CatalogTarget, resolve_target

    from .functions_host.state import RunningHost

    password = getattr(args, "password", None) or os.environ.get("ATLAS_PASSWORD") or settings.atlas_password
    if getattr(args, "atlas_url", None):
        return CatalogTarget(
            "atlas",
            atlas_base(args.atlas_url),
            username=getattr(args, "user", None) or settings.atlas_username,
            password=password,
            type_prefix=settings.type_prefix,
        )
    if settings.purview_account_name or settings.purview_endpoint or settings.atlas_endpoint:
        return resolve_target(settings)
    folder = data_dir(args)
    running = RunningHost.find(folder)
    if running is not None and running.atlas_url:
        return CatalogTarget("atlas", running.atlas_url, type_prefix=settings.type_prefix)
    raise NoCatalog(
        "no catalog: pass --atlas-url URL, set PURVIEW_ACCOUNT_NAME, PURVIEW_ENDPOINT or ATLAS_ENDPOINT, or start "
        f"`ol2purview serve` (none runs on {folder}; --data DIR names another data folder)"
    )


def with_catalog(settings: Settings, target: CatalogTarget) -> Settings:
    """`settings` that name `target` as their catalog (for the jobs that read the catalog from the settings)."""
    if target.kind != "atlas" or not target.endpoint:
        return settings
    return replace(
        settings,
        purview_account_name=None,
        purview_endpoint=None,
        atlas_endpoint=target.endpoint,
        atlas_username=target.username,
        atlas_password=target.password,
    )


def function_endpoint(
    args: argparse.Namespace, env: Mapping[str, str], master_key: bool = False
) -> tuple[str, str | None]:
    """(base URL as given, key): `--url`, else the running serve's; `--key`, else `$OL2PURVIEW_FUNCTION_KEY` (with
    `master_key`: `$OL2PURVIEW_MASTER_KEY`), else the running serve's kept key when the URL is that serve. Raises
    NoEndpoint saying what to pass."""
    from .functions_host.state import RunningHost, kept_function_key

    folder = data_dir(args, env)
    running = RunningHost.find(folder)
    url = getattr(args, "url", None) or (running.url if running else None)
    if not url:
        raise NoEndpoint(
            f"no --url given and no `ol2purview serve` is running on {folder}: start it, or pass "
            "--url URL --key KEY (or --data DIR of the running serve)"
        )
    parts = urlsplit(url)
    base = f"{parts.scheme}://{parts.netloc}"
    which, key_env = ("masterKey", MASTER_KEY_ENV) if master_key else ("functionKey", KEY_ENV)
    return url, getattr(args, "key", None) or env.get(key_env) or kept_function_key(base, folder, which)


def ledger_settings(args: argparse.Namespace, settings: Settings) -> Settings:
    """The settings of the connector's ledger (its run-state store) for a tool that acts on what the connector
    wrote: the data folder's, with the storage the running `serve` uses when the environment names none (its Table
    store on Azurite, say)."""
    from .functions_host.state import RunningHost

    folder = data_dir(args)
    running = RunningHost.find(folder)
    storage = settings.storage_connection or (running.storage_connection if running is not None else None)
    return replace(settings, data_dir=folder, storage_connection=storage)
