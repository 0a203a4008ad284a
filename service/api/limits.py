"""Rate limits per client address and per bearer token: fixed one-minute windows in Redis."""

from __future__ import annotations

import time

from flask import Flask, current_app, request

from service import problems
from service.config import Settings
from service.tokens import token_hash

WINDOW_S = 60
EXEMPT = frozenset({"health.healthz", "observability.metrics_text"})


def register(app: Flask, settings: Settings) -> None:
    """Check the limits that are on (not 0) before every request but health and metrics."""
    per_address, per_token = settings.rate_limit_per_address, settings.rate_limit_per_token
    if not (per_address or per_token):
        return

    def check() -> None:
        if request.endpoint in EXEMPT:
            return
        limits = [("addr", request.remote_addr or "unknown", per_address)] if per_address else []
        authorization = request.headers.get("Authorization") if per_token else None
        if authorization is not None:  # the hash only: a token never becomes a key name
            limits.append(("token", token_hash(authorization), per_token))
        for kind, who, limit in limits:
            _count(kind, who, limit)

    app.before_request(check)


def _count(kind: str, who: str, limit: int) -> None:
    """Count one request of `who` in this minute's window; 429 once it is over `limit`."""
    now = time.time()
    key = f"rl:{{{kind}:{who}}}:{int(now // WINDOW_S)}"
    if current_app.extensions["spinner"].store.incr_window(key, WINDOW_S) > limit:
        retry_after = WINDOW_S - int(now % WINDOW_S)
        raise problems.TooManyRequests(
            f"more than {limit} requests a minute per {kind}; retry in {retry_after} s",
            retry_after=retry_after)
