"""One HTTP/1.1 connection to a notification receiver, pinned to the address its URL was
checked to resolve to, kept open between POSTs while the receiver allows it.

A POST is written in one send (head and body; http.client writes them apart, waking the
receiver twice) and only its answer's status is read: the head up to ANSWER_BYTES, then a
body of a stated length up to the same bound, and the connection is kept for the next POST;
an answer without a length, or chunked, or longer, or saying `Connection: close`, closes it.
Interim (1xx) answers are skipped. Redirects are answers like any other: not followed."""

from __future__ import annotations

import re
import socket
import ssl
import time

from service.adapters.webhook_targets import Target

ANSWER_BYTES = 65_536
"""The most of an answer's head, or of its body, read."""
STATUS = re.compile(rb"HTTP/1\.([01]) (\d{3})[^\r\n]*\r\n")
LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*(\d+)[ \t]*(?=\r\n)", re.IGNORECASE)
CLOSE = re.compile(rb"\r\nconnection:[^\r\n]*\bclose\b", re.IGNORECASE)
CHUNKED = re.compile(rb"\r\ntransfer-encoding:", re.IGNORECASE)
TLS = ssl.create_default_context()


class BadAnswer(OSError):
    """An answer that is not HTTP/1.x, or too long a head: the try got no answer."""


class Channel:
    """A connection to one checked target (opened on the first POST, again after a close)."""

    def __init__(self, target: Target, timeout_s: float) -> None:
        self.target, self.timeout_s = target, timeout_s
        self.sock: socket.socket | None = None
        name = f"[{target.host}]" if ":" in target.host else target.host  # IPv6: bracketed
        default = 443 if target.scheme == "https" else 80
        self.host = name if target.port == default else f"{name}:{target.port}"

    def close(self) -> None:
        """Close the connection, if open."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def post(self, headers: dict[str, str], body: bytes) -> int:
        """POST `body` with `headers` to the target's path; return the answer's status. The
        connection (if open) and the head's wait share the timeout; OSError if no answer."""
        deadline = time.monotonic() + self.timeout_s
        if self.sock is None:
            self.sock = self._connect()
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self.sock.settimeout(max(0.001, deadline - time.monotonic()))
        self.sock.sendall(f"POST {self.target.path} HTTP/1.1\r\nHost: {self.host}\r\n{lines}"
                          f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        return self._answer(deadline)

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
        data = b""
        while True:
            head, data = self._head(data, deadline)
            found = STATUS.match(head)
            if found is None:
                raise BadAnswer("not an HTTP/1.x answer")
            status = int(found.group(2))
            if status >= 200:
                break
        length = LENGTH.search(head)
        keep = (found.group(1) == b"1" and length is not None and not CLOSE.search(head)
                and not CHUNKED.search(head) and int(length.group(1)) <= ANSWER_BYTES)
        if keep and length is not None:
            self._read_to(data, int(length.group(1)))
        else:
            self.close()
        return status

    def _head(self, data: bytes, deadline: float) -> tuple[bytes, bytes]:
        """Return an answer's head (its blank line included) and what came after it."""
        while (end := data.find(b"\r\n\r\n")) < 0:
            if len(data) > ANSWER_BYTES:
                raise BadAnswer("the answer's head is too long")
            data += self._recv(deadline)
        return data[:end + 4], data[end + 4:]

    def _read_to(self, data: bytes, length: int) -> None:
        """Read the rest of a body of `length` bytes, `data` of it read already."""
        deadline = time.monotonic() + self.timeout_s
        while len(data) < length:
            data += self._recv(deadline)

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
