"""CORS for the origins in the `cors_origins` setting; with none set, no CORS header at all."""

from __future__ import annotations

from flask import Flask, Response, request

ALLOW_METHODS = "GET, POST, OPTIONS"
ALLOW_HEADERS = ("Authorization, Content-Type, If-Match, Idempotency-Key, Last-Event-ID, "
                 "X-Request-ID, If-None-Match")
EXPOSE_HEADERS = "ETag, Retry-After, Location, X-Request-ID"
PREFLIGHT_MAX_AGE_S = "600"


def register(app: Flask, origins: str) -> None:
    """Answer preflights and mark answers for the comma-separated `origins` (`*`: any)."""
    allowed = {origin.strip() for origin in origins.split(",") if origin.strip()}
    if not allowed:
        return

    def allows(origin: str | None) -> bool:
        return origin is not None and ("*" in allowed or origin in allowed)

    @app.before_request
    def preflight() -> Response | None:
        if request.method != "OPTIONS" or not allows(request.origin) \
                or "Access-Control-Request-Method" not in request.headers:
            return None
        return app.response_class(status=204, headers={
            "Access-Control-Allow-Methods": ALLOW_METHODS,
            "Access-Control-Allow-Headers": ALLOW_HEADERS,
            "Access-Control-Max-Age": PREFLIGHT_MAX_AGE_S})

    @app.after_request
    def mark(response: Response) -> Response:
        response.vary.add("Origin")
        if allows(request.origin):
            response.headers["Access-Control-Allow-Origin"] = request.origin
            response.headers["Access-Control-Expose-Headers"] = EXPOSE_HEADERS
        return response
