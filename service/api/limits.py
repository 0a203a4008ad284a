"""Rate limits per client address and per bearer token: fixed one-minute windows in Redis."""

from __future__ import annotations

import time

from flask import Flask, current_app, request

from service import problems
from service.tokens import token_hash

WINDOW_S = 60
EXEMPT = frozenset({"health.healthz", "observability.metrics_text"})


def register(app: Flask) -> None:
    """Check both limits before every request but the health check and the metrics."""
    app.before_request(_check)


def _check() -> None:
    if request.endpoint in EXEMPT:
        return
    settings = current_app.extensions["spinner"].settings
    limits = [("addr", request.remote_addr or "unknown", settings.rate_limit_per_address)]
    if "Authorization" in request.headers:  # the hash only: a token never becomes a key name
        limits.append(("token", token_hash(request.headers["Authorization"]),
                       settings.rate_limit_per_token))
    now = time.time()
    window = int(now // WINDOW_S)
    for kind, who, limit in limits:
        key = f"rl:{{{kind}:{who}}}:{window}"
        if limit and current_app.extensions["spinner"].store.incr_window(key, WINDOW_S) > limit:
            retry_after = WINDOW_S - int(now % WINDOW_S)
            raise problems.TooManyRequests(
                f"more than {limit} requests a minute per {kind}; retry in {retry_after} s",
                retry_after=retry_after)
