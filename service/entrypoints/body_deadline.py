"""A request body due whole within a deadline (issue 17): a client that sends half a body and
stops, or trickles it a byte at a time, is answered 408 and cut off, instead of holding its
connection, and a place in its worker's pool, for ever."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import gevent

from service.api import problems


class DeadlineBody:
    """gunicorn's request body (`wsgi.input`) whose reads, all together, may wait at most
    `seconds`, counted from the first: one deadline for the whole body, not one a read. A
    read past it raises `problems.BodyTimeout` and marks the request to close its
    connection. What has already arrived is still read after the deadline."""

    def __init__(self, request: Any, seconds: float) -> None:
        self._request = request
        self._body = request.body
        self._seconds = seconds
        self._deadline: float | None = None

    def read(self, size: int | None = None) -> bytes:
        """Read up to `size` bytes (all when None), as the wrapped body does."""
        return self._within(self._body.read, size)

    def readline(self, size: int | None = None) -> bytes:
        """Read one line, as the wrapped body does."""
        return self._within(self._body.readline, size)

    def readlines(self, size: int | None = None) -> list[bytes]:
        """Read the lines, as the wrapped body does."""
        return self._within(self._body.readlines, size)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.readline, b"")

    def _within(self, read: Callable[[int | None], Any], size: int | None) -> Any:
        if self._deadline is None:
            self._deadline = time.monotonic() + self._seconds
        timeout = gevent.Timeout(max(self._deadline - time.monotonic(), 0.0))
        timeout.start()
        try:
            return read(size)
        except gevent.Timeout as fired:
            if fired is not timeout:
                raise
            self._request.must_close = True  # gunicorn answers `Connection: close`, then closes
            raise problems.BodyTimeout(
                f"the body did not arrive within {self._seconds:g} s of its first read; "
                "send it whole, without pausing") from None
        finally:
            timeout.close()
