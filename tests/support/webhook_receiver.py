"""A real HTTP receiver of notifications (webhooks) on loopback, in a thread: it records each
request (and hands it to whoever waits on `arrivals`) and answers the statuses it is told, in
turn, then 200; or never answers."""

from __future__ import annotations

import json
import queue
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HANG_S = 30.0
"""How long a receiver told to hang holds a request before it gives up."""


@dataclass(frozen=True)
class Received:
    """One request as it arrived: its path, headers, body, the sender's port and when."""

    path: str
    headers: dict[str, str]
    body: str
    port: int = 0
    at: float = field(default_factory=time.monotonic)

    @property
    def json(self) -> Any:
        """The body's JSON."""
        return json.loads(self.body)


class Receiver:
    """A loopback HTTP server whose requests are recorded in `received`, in order of arrival,
    and put on `arrivals` (for a back end that acts on each).
    `statuses` are answered first, one a request; then 200. With `hang`, no request is
    answered until `release()`. With `keep_alive`, it speaks HTTP/1.1 and keeps connections
    open between requests."""

    def __init__(self, statuses: list[int] | None = None, hang: bool = False,
                 keep_alive: bool = False) -> None:
        self.keep_alive = keep_alive
        self.received: list[Received] = []
        self.arrivals: queue.Queue[Received] = queue.Queue()
        self.statuses = list(statuses or [])
        self.released = threading.Event()
        if not hang:
            self.released.set()
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self.server.server_address[1])

    def url(self, host: str = "127.0.0.1") -> str:
        """Return its URL, naming it by `host`."""
        return f"http://{host}:{self.port}/hooks/spinner"

    def bodies(self, kind: str | None = None) -> list[Any]:
        """Return the bodies received (of `type` `kind` if named), in order of arrival."""
        with self.lock:
            found = [r.json for r in self.received]
        return [b for b in found if kind is None or b["type"] == kind]

    def release(self) -> None:
        """Let every held request (and every later one) be answered."""
        self.released.set()

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()

    def _answer(self, received: Received) -> int:
        """Record a request; return the status to answer it with."""
        with self.lock:
            self.received.append(received)
            self.arrivals.put(received)
            return self.statuses.pop(0) if self.statuses else 200

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if receiver.keep_alive else "HTTP/1.0"

            def do_POST(self) -> None:
                """Record the request, wait while held, answer its status."""
                body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                status = receiver._answer(Received(self.path, dict(self.headers), body,
                                                   self.client_address[1]))
                receiver.released.wait(HANG_S)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                """Log nothing."""

        return Handler
