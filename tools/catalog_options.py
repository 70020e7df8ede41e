"""The catalog a command-line tool talks to, chosen the same way by every tool:

1. `--atlas-url URL` (any Atlas v2 base, e.g. http://127.0.0.1:21000/api/atlas/v2), with `--user` and the password
   from `ATLAS_PASSWORD` (a password on the command line is visible to every user of the machine);
2. else the settings: `PURVIEW_ACCOUNT_NAME` (Entra ID, `az login` locally) or `ATLAS_ENDPOINT`;
3. else the embedded catalog of the `ol2purview serve` running on the data folder.
"""
from __future__ import annotations

import argparse
import os

from olparser.catalog import CatalogTarget, resolve_target
from olparser.settings import Settings


class NoCatalog(ValueError):
    """No catalog could be chosen; the message says how to name one."""


def add_catalog_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("catalog (default: PURVIEW_ACCOUNT_NAME or ATLAS_ENDPOINT, else the running "
                                      "`ol2purview serve`'s embedded catalog)")
    group.add_argument("--atlas-url", help="an Atlas v2 base URL, e.g. http://127.0.0.1:21000/api/atlas/v2")
    group.add_argument("--user", help="basic-auth user for --atlas-url (default: ATLAS_USERNAME); the password is "
                                      "read from ATLAS_PASSWORD")


def catalog_target(args: argparse.Namespace, settings: Settings) -> CatalogTarget:
    """The target named by the arguments, the settings or the running local host (in that order)."""
    password = getattr(args, "password", None) or os.environ.get("ATLAS_PASSWORD") or settings.atlas_password
    if getattr(args, "atlas_url", None):
        return CatalogTarget("atlas", args.atlas_url.rstrip("/"), username=args.user or settings.atlas_username,
                             password=password)
    if settings.purview_account_name or settings.atlas_endpoint:
        return resolve_target(settings)
    from tools.functions_host.state import RunningHost

    running = RunningHost.find(settings.data_dir)
    if running is not None and running.atlas_url:
        return CatalogTarget("atlas", running.atlas_url)
    raise NoCatalog("no catalog: pass --atlas-url, set PURVIEW_ACCOUNT_NAME or ATLAS_ENDPOINT, or start "
                    f"`ol2purview serve` (none runs on {settings.data_dir})")
