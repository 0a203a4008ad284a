"""Caps on the streams (SSE) an API process holds open: a stream holds a connection until its
match ends, and a process serves a fixed number of connections (`--worker-connections`), so
streams may take only part of them, and one client only part of that. Counted in the
process, which is where the connections are: nothing to release if a process dies."""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable

from service.api import problems

RETRY_AFTER_S = 5
"""The Retry-After of a stream refused for the process's cap: streams end as matches do."""


class OpenStreams:
    """The streams this process holds open, in all and by client."""

    def __init__(self, most: int, per_client: int) -> None:
        self.most, self.per_client = most, per_client
        self.total = 0
        self.by_client: collections.Counter[str] = collections.Counter()
        self.lock = threading.Lock()

    def admit(self, client: str) -> Callable[[], None]:
        """Count one more stream of `client` (an API key's client, else an address); return
        what ends its count, to call once when it closes. 503 past the process's cap (0:
        none), 429 past the client's (0: none)."""
        with self.lock:  # one thread under gevent; a server with threads shares it too
            if self.most and self.total >= self.most:
                raise problems.StreamsFull(
                    f"this server holds {self.most} streams open, its most; retry later",
                    retry_after=RETRY_AFTER_S)
            if self.per_client and self.by_client[client] >= self.per_client:
                raise problems.TooManyStreams(
                    f"a client may hold {self.per_client} streams open on one API process; "
                    "close one first", retry_after=RETRY_AFTER_S)
            self.total += 1
            self.by_client[client] += 1
        released = False

        def release() -> None:
            nonlocal released
            with self.lock:
                if not released:
                    released = True
                    self.total -= 1
                    self.by_client[client] -= 1
                    if not self.by_client[client]:
                        del self.by_client[client]

        return release
