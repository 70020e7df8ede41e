"""End-to-end fixtures: `ol2purview serve` (and `ol2purview worker`) as real subprocesses, each on the port the
system gives it (`--port 0`, read back from its `ready:` line), so two servers never race for one port. The launcher
is `tools/functions_host/launcher.py` (the benchmarks start servers with it too).

`start_serve(data_dir, storage=..., worker=...)` returns a `ServeHandle`: url, keys, its embedded catalog, the status
endpoint, `wait_until_processed()`, `stop()`. The `serve` fixture gives one per test module in intake-only mode
(`--no-worker --storage embedded`, so a test reads what was queued with `drain_queue`, tests/support/serves.py);
`serve_factory` lets a test start its own (stopped at the end of the test). `start_worker(...)` runs `ol2purview
worker` against a serve's storage and catalog. Tests import these from the launcher and tests/support/serves.py.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Callable, Iterator

import pytest

from tests.support.serves import STORAGE_OF_RUN_STATE_STORE
from tools.functions_host.launcher import ServeHandle, start_serve


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeHandle]:
    """One server per test module, with a known key; stopped (and checked to exit 0) afterwards."""
    handle = start_serve(tmp_path_factory.mktemp("serve"), key=secrets.token_urlsafe(24), worker=False)
    yield handle
    assert handle.stop() == 0, handle.output()


@pytest.fixture
def serve_factory(tmp_path: Path) -> Iterator[Callable[..., ServeHandle]]:
    """Start servers of one's own: `serve_factory(key=None, extra_args=(), env=None, storage="embedded",
    worker=True)`; stopped after the test."""
    started: list[ServeHandle] = []

    def factory(
        key: str | None = None,
        extra_args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        storage: str = "embedded",
        worker: bool = True,
        default_ports: bool = False,
    ) -> ServeHandle:
        handle = start_serve(
            tmp_path / f"serve{len(started)}",
            key=key,
            extra_args=extra_args,
            env=env,
            storage=storage,
            worker=worker,
            default_ports=default_ports,
        )
        started.append(handle)
        return handle

    yield factory
    for handle in started:
        handle.stop()


@pytest.fixture
def serve_on_each_store(
    serve_factory: Callable[..., ServeHandle], run_state_store_kind: str
) -> Callable[..., ServeHandle]:
    """`serve_factory` on each run-state store the product ships (the test runs once per store, see
    `run_state_store_kind` in tests/conftest.py): RUN_STATE_STORE=sqlite with the embedded queues, or
    RUN_STATE_STORE=table on the Azurite that serve starts (the test's own emulator: run-state and queue names are
    the product's fixed ones)."""
    if run_state_store_kind == "table":
        from tests.support.azurite_fixture import require_azurite

        require_azurite()

    def factory(
        key: str | None = None, extra_args: tuple[str, ...] = (), env: dict[str, str] | None = None, worker: bool = True
    ) -> ServeHandle:
        return serve_factory(
            key=key,
            extra_args=extra_args,
            worker=worker,
            env={**(env or {}), "RUN_STATE_STORE": run_state_store_kind},
            storage=STORAGE_OF_RUN_STATE_STORE[run_state_store_kind],
        )

    return factory
