"""Rate limits per client address and per bearer token: fixed one-minute windows in Redis."""

from __future__ import annotations

import time

from flask import Flask, current_app, request

from service.adapters.settings import Settings
from service.api import problems
from service.api.answers import games
from service.api.requests import bearer_token
from service.usecases.tokens import token_hash

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
        if per_address:
            _count("addr", request.remote_addr or "unknown", per_address)
        token = _sent_token() if per_token else None
        if token is not None:
            game_id = (request.view_args or {}).get("game_id")
            if game_id is not None:  # an unknown game gets 404 before any token check
                games().require_game(game_id)
            _count("token", token_hash(token), per_token)  # the hash: no key names a token

    app.before_request(check)


def _sent_token() -> str | None:
    """Return the bearer token sent however `Bearer` is spelt, else the Authorization header
    as sent (a malformed one, which gets 401), else None."""
    try:
        return bearer_token()
    except problems.Unauthorized:
        return request.headers.get("Authorization")


def _count(kind: str, who: str, limit: int) -> None:
    """Count one request of `who` in this minute's window; 429 once it is over `limit`."""
    now = time.time()
    key = f"rl:{{{kind}:{who}}}:{int(now // WINDOW_S)}"
    if current_app.extensions["spinner"].rate_counter.incr_window(key, WINDOW_S) > limit:
        retry_after = WINDOW_S - int(now % WINDOW_S)
        raise problems.TooManyRequests(
            f"more than {limit} requests a minute per {kind}; retry in {retry_after} s",
            retry_after=retry_after)
