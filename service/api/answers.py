"""What every blueprint's views share: the use cases, the caller's seat and JSON answers."""

from __future__ import annotations

from typing import Any

import orjson
from flask import Response, current_app

from service.api import requests as req
from service.usecases.games import Games

JSON = "application/json"
BY_CALLER = {"Vary": "Authorization"}
"""On each answer that depends on whose token was sent (R25): a cache keeps them apart."""
to_json = orjson.dumps  # compact, in the order of the dict given


def games() -> Games:
    """Return the app's use cases."""
    service: Games = current_app.extensions["spinner"].games
    return service


def answer(payload: dict[str, Any], status: int = 200,
           headers: dict[str, str] | None = None) -> Response:
    """Answer with `payload` as JSON: already in its schema's shape (keys, order, values)."""
    return Response(to_json(payload), status, headers=headers, content_type=JSON)


def caller_seat(game_id: str, required: bool) -> int | None:
    """Return the caller's seat (None: a spectator); 404 for an unknown game comes first."""
    games().require_game(game_id)
    return games().seat_for(game_id, req.bearer_token(), required)
