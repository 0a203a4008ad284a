"""Rate limits by who is asking, in fixed one-minute windows in Redis: a back end by its API
key, a seat by its token, and anyone else by the address."""

from __future__ import annotations

import time

from flask import Flask, current_app, request

from service.adapters.settings import Settings
from service.api import problems
from service.api.answers import games
from service.api.clients import address_client, known_keys, sent_key
from service.api.requests import bearer_token
from service.api.stream import TICKET
from service.usecases.errors import NoSuchGame
from service.usecases.tokens import token_game, token_hash

WINDOW_S = 60
EXEMPT = frozenset({"health.healthz", "observability.metrics_text"})


def register(app: Flask, settings: Settings) -> None:
    """Before every request but health and metrics: 401 for an unknown API key, then count the
    request in one window, whose limit (0: none) gets 429 once used up. A valid key's window
    takes it, seat token or not (a back end plays for its users); else a seat token of the
    path's game takes it; else the address's."""
    known_keys(settings)  # a malformed API_KEYS fails here, as the app starts
    per_address, per_token = settings.rate_limit_per_address, settings.rate_limit_per_token

    def check() -> None:
        if request.endpoint in EXEMPT:
            return
        key = sent_key()
        if key is not None:
            _count(key.client.id, key.per_minute)
            return
        if not (per_token or per_address):  # no window to count in: whose it is is moot
            return
        seat = _seat_token_hash()
        if seat is not None:
            _count(f"token:{seat}", per_token)  # the hash: no Redis key names a token
        else:
            _count(address_client().id, per_address)

    app.before_request(check)


def _seat_token_hash() -> str | None:
    """Return the hash of the bearer token sent if it is a seat token of the path's game
    (or of the seat token that took the stream ticket sent to its stream), else None: no
    token, a malformed header, a forged token, another game's token or a path of no game
    (POST /v1/games) count against the address."""
    game_id = (request.view_args or {}).get("game_id")
    if request.endpoint == "stream.stream" and TICKET in request.args and game_id is not None:
        return games().ticket_token(game_id, request.args[TICKET])
    try:
        token = bearer_token()
    except problems.Unauthorized:
        return None
    if token is None or game_id is None or token_game(token) != game_id:
        return None
    try:
        seats = games().require_game(game_id).seats
    except NoSuchGame:  # the view answers 404, counted against the address
        return None
    digest = token_hash(token)
    return digest if digest in seats else None


def _count(who: str, limit: int) -> None:
    """Count one request of `who` (`kind:id`) in this minute's window; 429 once it is over
    `limit` (0: no limit, nothing counted)."""
    if not limit:
        return
    now = time.time()
    key = f"rl:{{{who}}}:{int(now // WINDOW_S)}"
    if current_app.extensions["spinner"].rate_counter.incr_window(key, WINDOW_S) > limit:
        retry_after = WINDOW_S - int(now % WINDOW_S)
        kind = who.partition(":")[0]
        raise problems.TooManyRequests(
            f"more than {limit} requests a minute per {kind}; retry in {retry_after} s",
            retry_after=retry_after)
