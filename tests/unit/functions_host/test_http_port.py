"""`ol2purview serve`'s HTTP port: the default when free, else a free one, even when two serves start together."""

from __future__ import annotations

import socket

import pytest

from tools.functions_host import cli


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_two_serves_starting_together_take_different_ports(monkeypatch, capsys) -> None:
    """The first serve's socket holds the default port from the moment it is bound: the second one, bound before
    the first one serves, falls back to a free port and says so (it used to bind the same port and fail later, on
    listen: "Address already in use")."""
    default = _free_port()
    monkeypatch.setattr(cli, "DEFAULT_PORT", default)
    first = cli.bind_http("127.0.0.1", None)
    try:
        second = cli.bind_http("127.0.0.1", None)
        try:
            taken = (first.getsockname()[1], second.getsockname()[1])
            assert taken[0] == default and taken[1] != default
            assert capsys.readouterr().out.splitlines() == [
                f"port {default} on 127.0.0.1 is in use (another `ol2purview serve`?): listening on {taken[1]}"
            ]
            with socket.create_connection(("127.0.0.1", default), timeout=5):
                pass  # accepted into the backlog before anything serves
        finally:
            second.close()
    finally:
        first.close()


def test_a_port_given_that_is_taken_names_the_flag() -> None:
    taken = cli.bind_http("127.0.0.1", 0)
    try:
        port = taken.getsockname()[1]
        with pytest.raises(OSError) as error:
            cli.bind_http("127.0.0.1", port)
        assert error.value.strerror == (
            f"port {port} on 127.0.0.1 is already in use (another `ol2purview serve`?): pass --port N to listen on "
            "another one"
        )
    finally:
        taken.close()
