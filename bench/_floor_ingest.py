"""The intake's floor: a bare uvicorn + Starlette endpoint that parses the posted event (json.loads) and inserts it
into SQLite with the queue's durability (WAL, synchronous=FULL, a transaction per request), nothing else: no
contract, no keys, no envelope. bench/ingest_http.py runs it with the same client as `ol2purview serve`.

`python -m bench._floor_ingest PORT DB` serves on 127.0.0.1:PORT (0: a free port) and prints "listening on URL".
"""

from __future__ import annotations

import json
import socket
import sqlite3
import sys
import threading
import time
import uuid

import anyio.to_thread
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


def app_for(db_path: str) -> Starlette:
    db = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, id TEXT, text TEXT, at REAL)")
    lock = threading.Lock()

    def insert(text: str) -> None:
        with lock:
            db.execute("INSERT INTO events (id, text, at) VALUES (?, ?, ?)", (str(uuid.uuid4()), text, time.time()))

    async def ingest(request: Request) -> JSONResponse:
        event = json.loads(await request.body())
        await anyio.to_thread.run_sync(insert, json.dumps(event))
        return JSONResponse({"runId": event.get("run", {}).get("runId"), "status": "accepted"})

    return Starlette(routes=[Route("/ingest", ingest, methods=["POST"])])


def main(argv: list[str]) -> None:
    port, db_path = int(argv[0]), argv[1]
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    sock.listen(2048)  # connections wait in the backlog until uvicorn accepts
    print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}/ingest", flush=True)
    config = uvicorn.Config(app_for(db_path), lifespan="off", access_log=False, log_level="warning", http="httptools")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main(sys.argv[1:])
