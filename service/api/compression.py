"""gzip for the API's answers it pays on: a body of `gzip_min_bytes` or more, to a client
whose Accept-Encoding takes gzip. Never the event stream (each frame must reach the client as
it is sent), nor an answer with no body (204, 304), nor the pages' files (sent as they are).
Every answer it may compress says `Vary: Accept-Encoding`, a 304 too (as its 200 would)."""

from __future__ import annotations

import zlib

from flask import Flask, Response, request

LEVEL = 1
"""zlib's fastest level: a state answer (1-3 KB) shrinks to about a third of its size in
about 20 us, a third less CPU than level 6 for 10% more bytes (README, "Cheap to poll")."""
GZIP = 31
"""zlib's wbits for a gzip member (RFC 1952), with no name and no time in its header."""


def register(app: Flask, min_bytes: int) -> None:
    """Compress every answer of `min_bytes` or more for clients that take gzip (0: never)."""
    if not min_bytes:
        return

    @app.after_request
    def compress(response: Response) -> Response:
        if response.is_streamed or response.mimetype == "text/event-stream" \
                or response.status_code == 204 or "Content-Encoding" in response.headers:
            return response
        response.vary.add("Accept-Encoding")  # a cache keeps gzip and plain answers apart
        if response.status_code == 304:
            return response
        body = response.get_data()
        if len(body) >= min_bytes and takes_gzip(request.headers.get("Accept-Encoding", "")):
            response.set_data(zlib.compress(body, LEVEL, wbits=GZIP))
            response.headers["Content-Encoding"] = "gzip"
        return response


def takes_gzip(accept_encoding: str) -> bool:
    """Whether an Accept-Encoding value takes gzip (RFC 9110 12.5.3): named with a q-value
    above 0, or else covered by `*` with one; an unreadable q-value counts as 0."""
    weights: dict[str, float] = {}
    for item in accept_encoding.split(","):
        coding, *params = (part.strip() for part in item.split(";"))
        weights.setdefault(coding.lower(), _weight(params))
    return weights.get("gzip", weights.get("x-gzip", weights.get("*", 0.0))) > 0


def _weight(params: list[str]) -> float:
    """The q-value among a coding's parameters (1 when none is given, 0 if unreadable)."""
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                return float(value.strip())
            except ValueError:
                return 0.0
    return 1.0
