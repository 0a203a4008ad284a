"""One HTTP/1.1 connection to a notification receiver, pinned to the address its URL was
checked to resolve to, kept open between POSTs while the receiver allows it.

A POST is written in one send (head and body; http.client writes them apart, waking the
receiver twice) and only its answer's status is read: the head up to ANSWER_BYTES, then a
body of a stated length up to the same bound, and the connection is kept for the next POST;
an answer without a length, or chunked, or longer, or saying `Connection: close`, closes it.
Interim (1xx) answers are skipped. Redirects are answers like any other: not followed.

Several POSTs to one receiver (`post_all`) go first alone, on a fresh connection; once the
receiver has kept it, up to PIPELINE at a time in one send, their answers read in order
(HTTP/1.1 pipelining, which every HTTP/1.1 server must take): one wake of the receiver and
of the sender for many notifications. A connection that closes before answering them all
has the rest sent again on a fresh one (a receiver may see a `webhook-id` twice: at least
once).

`post_alone` makes one POST on a connection of its own, in an asyncio event loop: many of
them wait at once on one thread, for receivers that give no answer."""

from __future__ import annotations

import asyncio
import re
import socket
import ssl
import time
from collections.abc import Callable, Sequence

from service.adapters.webhook_targets import Target

ANSWER_BYTES = 65_536
"""The most of an answer's head, or of its body, read."""
STATUS = re.compile(rb"HTTP/1\.([01]) (\d{3})[^\r\n]*\r\n")
LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*(\d+)[ \t]*(?=\r\n)", re.IGNORECASE)
CLOSE = re.compile(rb"\r\nconnection:[^\r\n]*\bclose\b", re.IGNORECASE)
CHUNKED = re.compile(rb"\r\ntransfer-encoding:", re.IGNORECASE)
PIPELINE = 32
"""The most POSTs written together on a kept connection."""
TLS = ssl.create_default_context()


class BadAnswer(OSError):
    """An answer that is not HTTP/1.x, or too long a head: the try got no answer."""


Headers = dict[str, str] | Callable[[], dict[str, str]]
"""A request's headers, or what makes them as the request is written (a signature's time)."""


def encode(target: Target, headers: Headers, body: bytes) -> bytes:
    """Return a POST's bytes, head and body (its headers made now, if made as sent)."""
    name = f"[{target.host}]" if ":" in target.host else target.host  # IPv6: bracketed
    default = 443 if target.scheme == "https" else 80
    host = name if target.port == default else f"{name}:{target.port}"
    made = headers() if callable(headers) else headers
    lines = "".join(f"{name}: {value}\r\n" for name, value in made.items())
    return (f"POST {target.path} HTTP/1.1\r\nHost: {host}\r\n{lines}"
            f"Content-Length: {len(body)}\r\n\r\n".encode() + body)


def status_of(head: bytes) -> re.Match[bytes]:
    """Return an answer head's status line (its version and status as groups); BadAnswer if
    it is not HTTP/1.x."""
    found = STATUS.match(head)
    if found is None:
        raise BadAnswer("not an HTTP/1.x answer")
    return found


async def post_alone(target: Target, headers: Headers, body: bytes, timeout_s: float) -> int:
    """POST once on a connection of its own (TLS for https, checked against the URL's host)
    and return the answer's status, past any 1xx; OSError if no answer's head came within
    `timeout_s` (a timeout, a refused or closed connection, or no HTTP)."""
    tls = target.scheme == "https"
    try:
        async with asyncio.timeout(timeout_s):
            reader, writer = await asyncio.open_connection(
                target.address, target.port, ssl=TLS if tls else None,
                server_hostname=target.host if tls else None, limit=ANSWER_BYTES)
            try:
                writer.write(encode(target, headers, body))
                while True:
                    status = int(status_of(await reader.readuntil(b"\r\n\r\n")).group(2))
                    if status >= 200:  # past any interim answer
                        return status
            finally:
                writer.close()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError) as error:
        raise BadAnswer(f"no whole answer's head: {type(error).__name__}") from None


class Channel:
    """A connection to one checked target (opened on the first POST, again after a close)."""

    def __init__(self, target: Target, timeout_s: float) -> None:
        self.target, self.timeout_s = target, timeout_s
        self.sock: socket.socket | None = None
        self.came = b""  # received and not yet read: pipelined answers may come together

    def close(self) -> None:
        """Close the connection, if open."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self.came = b""

    def post(self, headers: Headers, body: bytes) -> int:
        """POST `body` with `headers` to the target's path; return the answer's status. The
        connection (if open) and the head's wait share the timeout; OSError if no answer."""
        deadline = time.monotonic() + self.timeout_s
        if self.sock is None:
            self.sock = self._connect()
        self.sock.settimeout(max(0.001, deadline - time.monotonic()))
        self.sock.sendall(encode(self.target, headers, body))
        return self._answer(deadline)

    def post_all(self, requests: Sequence[tuple[Headers, bytes]],
                 statuses: list[int]) -> None:
        """POST each of `requests` (headers, body) in order, appending each answer's status
        to `statuses`; OSError for the first that got no answer (the rest not sent)."""
        while len(statuses) < len(requests):
            rest = requests[len(statuses):]
            if self.sock is None:  # a fresh connection: one POST, to learn if it is kept
                statuses.append(self.post(*rest[0]))
                continue
            chunk = rest[:PIPELINE]
            try:
                self.sock.settimeout(self.timeout_s)
                self.sock.sendall(b"".join(encode(self.target, *request) for request in chunk))
                for _ in chunk:
                    statuses.append(self._answer(time.monotonic() + self.timeout_s))
                    if self.sock is None:
                        break  # closed after that answer: the rest on a fresh connection
            except ConnectionError:  # closed before answering: the rest on a fresh one
                self.close()

    def _connect(self) -> socket.socket:
        """Open a connection to the checked address (TLS for https, checked against the
        URL's host name), each write sent at once (no wait on a delayed ACK)."""
        sock = socket.create_connection((self.target.address, self.target.port), self.timeout_s)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.target.scheme == "https":
            sock = TLS.wrap_socket(sock, server_hostname=self.target.host)
        return sock

    def _answer(self, deadline: float) -> int:
        """Read the answer (past any 1xx); return its status, keeping the connection only
        if its body was read whole and the receiver keeps it."""
        while True:
            head = self._head(deadline)
            found = status_of(head)
            status = int(found.group(2))
            if status >= 200:
                break
        length = LENGTH.search(head)
        keep = (found.group(1) == b"1" and length is not None and not CLOSE.search(head)
                and not CHUNKED.search(head) and int(length.group(1)) <= ANSWER_BYTES)
        if keep and length is not None:
            self._skip(int(length.group(1)))
        else:
            self.close()
        return status

    def _head(self, deadline: float) -> bytes:
        """Take an answer's head (its blank line included) from what came."""
        while (end := self.came.find(b"\r\n\r\n")) < 0:
            if len(self.came) > ANSWER_BYTES:
                raise BadAnswer("the answer's head is too long")
            self.came += self._recv(deadline)
        head, self.came = self.came[:end + 4], self.came[end + 4:]
        return head

    def _skip(self, length: int) -> None:
        """Take a body of `length` bytes from what came (and what comes)."""
        deadline = time.monotonic() + self.timeout_s
        while len(self.came) < length:
            self.came += self._recv(deadline)
        self.came = self.came[length:]

    def _recv(self, deadline: float) -> bytes:
        """Receive what came, waiting no later than `deadline`; OSError if closed."""
        sock = self.sock
        if sock is None:
            raise ConnectionResetError("the connection is closed")
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        chunk = sock.recv(ANSWER_BYTES)
        if not chunk:
            raise ConnectionResetError("the receiver closed the connection")
        return chunk
