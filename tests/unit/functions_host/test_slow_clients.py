"""Slow and vanishing clients against the local host's HTTP server (uvicorn with its header deadline, over loopback):
200 slow senders do not starve others, a body that does not arrive in time is a 408, headers that do not arrive in
time close the connection, and a client that disconnects mid-body is one log line, without a stack trace."""

import logging
import socket
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import requests
import uvicorn

from tests.support.waiting import wait_until
from tools.functions_host.cli import bind_http
from tools.functions_host.config import HostConfig
from tools.functions_host.functions import describe_functions, load_app
from tools.functions_host.http_app import FunctionsHttpApp
from tools.functions_host.keys import KeyRing
from tools.functions_host.protocol import protocol_with_header_timeout

SAMPLE = Path(__file__).parent / "sample_app" / "function_app.py"
BODY_DEADLINE = 5.0  # long enough that a loaded machine answers the normal request before any 408
HEADER_TIMEOUT = 1.0
SLOW_HEADERS = (
    b"POST /svc/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nx-functions-key: host-key\r\n"
    b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
)


@contextmanager
def serving() -> Iterator[str]:
    """The sample app (host.json: maxOutstandingRequests 8) served by uvicorn in a thread on a free port."""
    functions = describe_functions(load_app(SAMPLE))
    app = FunctionsHttpApp(
        functions,
        HostConfig.load(SAMPLE.parent / "host.json"),
        KeyRing("master-key", ("host-key",)),
        {"queue": None},
        body_deadline=BODY_DEADLINE,
    )
    sock = bind_http("127.0.0.1", 0)
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            lifespan="off",
            access_log=False,
            log_config=None,
            http=protocol_with_header_timeout(HEADER_TIMEOUT),
            limit_concurrency=1000,
        )
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_until(lambda: server.started, timeout=10, interval=0.01, what="the server started")
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(15)


def connect(url: str) -> socket.socket:
    host, port = url.rsplit("//", 1)[1].split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def nothing_received_yet(sock: socket.socket) -> bool:
    """Whether the connection is open with no byte of an answer arrived (a closed one reads b"")."""
    sock.setblocking(False)
    try:
        sock.recv(1, socket.MSG_PEEK)  # a byte of an answer, or b"" (closed): either way not waiting
        return False
    except BlockingIOError:
        return True
    finally:
        sock.setblocking(True)


def read_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_200_slow_senders_do_not_starve_a_normal_request_and_get_408_at_the_body_deadline():
    with serving() as url:
        slow = [connect(url) for _ in range(200)]
        try:
            for sock in slow:
                sock.sendall(SLOW_HEADERS + b'{"partial": ')  # the rest of the 1,000 bytes never comes
            response = requests.post(
                f"{url}/svc/echo", headers={"x-functions-key": "host-key"}, data=b"hello", timeout=10
            )
            assert (response.status_code, response.json()["body"]) == (200, "hello")
            waiting = [sock for sock in slow if nothing_received_yet(sock)]
            # answered while every slow sender still waits for its 408 (none answered, none closed)
            assert len(waiting) == len(slow)
            answers = [read_all(sock) for sock in slow]  # each is answered, then closed
        finally:
            for sock in slow:
                sock.close()
    assert {answer.split(b"\r\n", 1)[0] for answer in answers} == {b"HTTP/1.1 408 Request Timeout"}
    assert answers[0].endswith(b'{"error": "the request body did not arrive within 5 s"}')


def test_headers_that_do_not_arrive_in_time_close_the_connection(caplog):
    with caplog.at_level(logging.INFO, logger="ol2purview.host"), serving() as url:
        sock = connect(url)
        sock.sendall(b"POST /svc/echo HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the end of the headers
        assert nothing_received_yet(sock)  # open: the host waits for the headers (HEADER_TIMEOUT)
        assert read_all(sock) == b""  # then closes it without an answer
        sock.close()
    assert any(r.getMessage().endswith("no complete request headers within 1 s") for r in caplog.records)


def test_a_client_that_disconnects_mid_body_is_one_log_line_without_a_stack_trace(caplog):
    with caplog.at_level(logging.INFO), serving() as url:
        sock = connect(url)
        sock.sendall(SLOW_HEADERS + b'{"partial": ')
        port = sock.getsockname()[1]
        sock.close()
        expected = f"client 127.0.0.1:{port} disconnected before sending the whole body of POST /svc/echo"
        wait_until(
            lambda: any(r.getMessage() == expected for r in caplog.records),
            timeout=10,
            interval=0.02,
            what=f"the log line {expected!r}",
        )
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    assert [r.levelname for r in caplog.records if r.getMessage() == expected] == ["INFO"]
