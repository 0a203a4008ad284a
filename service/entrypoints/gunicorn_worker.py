"""The gunicorn worker of `spinner serve`: gunicorn's gevent worker, except that the answers
gunicorn writes itself, to a request it cannot read (a bad request line or header, a URI or
headers over its limits, a bad chunk), are problem+json with an X-Request-ID like every other
answer (API.md "Errors"), not gunicorn's HTML page; and that a request's body must arrive
whole within BODY_READ_TIMEOUT_S of its first read, else 408 and the connection is closed
(`body_deadline`). Headers have a deadline already: gunicorn reads each request's line and
headers within its keep-alive timeout (2 s), or closes the connection. And an answer's head
goes out with the start of its body, in one send (`HeadWithBody`), not in a send of its own;
and a stream can learn at once that its client has gone (`HeadWithBody.when_gone`), not at
its next write.

gevent serves each connection in a greenlet, so a stream (SSE), which stays open until its
match ends, holds no thread: a process serves up to `--worker-connections` of them at once
while it goes on answering every other request.

    gunicorn --worker-class service.entrypoints.gunicorn_worker.ProblemWorker \
        service.entrypoints.wsgi:app
"""

from __future__ import annotations

import secrets
import socket
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

import gevent
import orjson
from gevent.socket import wait_read
from gunicorn import util
from gunicorn.workers.ggevent import GeventWorker

from service.adapters.settings import Settings
from service.entrypoints.body_deadline import DeadlineBody

SLUGS = {400: "invalid-request", 500: "internal"}
"""The app's own slugs for these statuses; any other is named after its reason phrase."""


def problem_answer(status: int) -> bytes:
    """Return a whole HTTP answer: `status` as problem+json, closing the connection."""
    reason = HTTPStatus(status).phrase
    slug = SLUGS.get(status, reason.lower().replace(" ", "-"))
    problem = {"type": f"/problems/{slug}", "title": reason, "status": status,
               "detail": f"the server could not handle the request: {reason}"}
    if status == 400:  # as the app's 400s, it names what is wrong
        problem["errors"] = [{"field": "request", "message": "not a readable HTTP request"}]
    body = orjson.dumps(problem)
    head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\n"
            f"Content-Type: application/problem+json\r\nContent-Length: {len(body)}\r\n"
            f"X-Request-ID: {secrets.token_hex(16)}\r\n\r\n")
    return head.encode("latin-1") + body


def write_problem(sock: socket.socket, status: int, _reason: str, _message: str) -> None:
    """gunicorn's `util.write_error`, in problem+json. Its reason is the status code's own
    (gunicorn sends 501 as "Bad Request"); its message is left out, as it can quote the
    request (a header's value, so a token)."""
    util.write_nonblock(sock, problem_answer(status))


class HeadWithBody:
    """A connection's socket for one answer, which holds gunicorn's first write (the head)
    back until its next (the body), so that an answer goes out in one send, not two. Any
    other use of the socket sends what is held first: bytes are delayed, never reordered."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._held: bytes | None = None
        self._holding = True  # only the answer's first write is held

    def sendall(self, data: bytes) -> None:
        """Hold the first write; send it with the next one."""
        if self._holding and self._held is None:
            self._held = bytes(data)
            return
        held, self._held, self._holding = self._held, None, False
        self._sock.sendall(data if held is None else held + data)

    def flush(self) -> None:
        """Send what is held (the head of an answer with no body)."""
        held, self._held, self._holding = self._held, None, False
        if held is not None:
            self._sock.sendall(held)

    def when_gone(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` once the client has closed the connection (or reset it), watched
        by a greenlet of its own, for an answer that sends while the client sends nothing (a
        stream); return what stops the watching. Bytes from the client end it unread."""
        sock = self._sock

        def watch() -> None:
            try:
                wait_read(sock.fileno())
                gone = sock.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                gone = True
            if gone:
                callback()

        return gevent.spawn(watch).kill

    def __getattr__(self, name: str) -> Any:
        self.flush()
        return getattr(self._sock, name)


class ProblemWorker(GeventWorker):
    """gunicorn's gevent worker, whose own error answers are problem+json and whose request
    bodies have a read deadline."""

    def init_process(self) -> None:
        """Send gunicorn's error answers through `write_problem`, read the body read
        deadline from the settings, then serve as gevent."""
        util.write_error = write_problem  # its one error writer (gunicorn/workers/base.py)
        self.body_read_timeout_s = Settings.from_env().body_read_timeout_s
        super().init_process()

    def handle_request(self, listener_name: Any, req: Any, sock: Any, addr: Any) -> None:
        """Serve one request, the app reading its body through a `DeadlineBody`, its answer
        written through a `HeadWithBody`."""
        body = req.body
        req.body = DeadlineBody(req, self.body_read_timeout_s)
        writer = HeadWithBody(sock)
        try:
            super().handle_request(listener_name, req, writer, addr)
        finally:  # what the app left unread, gunicorn skips within its keep-alive timeout
            req.body = body
            writer.flush()
