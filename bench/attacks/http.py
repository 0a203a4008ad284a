"""A small HTTP/1.1 client for the attacks: one call, JSON in and out, loopback only."""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from typing import Any


@dataclass
class Reply:
    """A reply's status, headers and body (parsed when it is JSON)."""

    status: int
    headers: dict[str, str]
    body: Any
    ms: float = 0.0


class Client:
    """Calls one server at `port` on 127.0.0.1, a new connection per call."""

    def __init__(self, port: int, headers: dict[str, str] | None = None) -> None:
        self.port = port
        self.headers = headers or {}

    def call(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
             raw: bytes | None = None, timeout: float = 30.0) -> Reply:
        """Send one request; a JSON `body` is sent as application/json, `raw` as it is."""
        import time

        sent = {**self.headers, **(headers or {})}
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            sent.setdefault("Content-Type", "application/json")
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        started = time.perf_counter()
        try:
            connection.request(method, path, body=data, headers=sent)
            answer = connection.getresponse()
            text = answer.read()
        finally:
            connection.close()
        kind = answer.getheader("Content-Type", "")
        parsed = json.loads(text) if "json" in kind and text else text
        return Reply(answer.status, dict(answer.getheaders()), parsed,
                     (time.perf_counter() - started) * 1000)
