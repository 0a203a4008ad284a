"""The /v1/games routes: thin views that load a schema, call a use case and answer its view
(already in the answer's schema's shape: see tests/unit/test_schemas.py)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, url_for

from service.api import problems, schemas
from service.api import requests as req
from service.api.answers import BY_CALLER, JSON, answer, caller_seat, games, to_json
from service.api.clients import asking_client
from service.game.variants import VARIANTS
from service.usecases.errors import InvalidRequest
from service.usecases.seat_views import View

bp = Blueprint("games", __name__, url_prefix="/v1")

_create_in = schemas.CreateGameIn()
_move_in = {name: schemas.MoveIn(variant.tiles) for name, variant in VARIANTS.items()}
"""The schema of a move in a game of each variant: a misspelt tile is named as that game's set
has it (R2), or said to be none of it (F1)."""
_leave_in = schemas.LeaveIn()


def state_body(view: View) -> dict[str, Any]:
    """Return a state view as answered (StateOut's shape): the shared table, then the seat's
    own part."""
    return {**view.table.fields, **view.own}


def state_answer(view: View) -> Response:
    """Answer with a state view and its ETag."""
    return Response(to_json(state_body(view)), content_type=JSON,
                    headers={**BY_CALLER, "ETag": f'"{view.table.version}"'})


def read_state_answer(view: View) -> Response:
    """Answer a GET of a state: 304 with no body if If-None-Match names its ETag (the version,
    which every caller of the game may read), else the state."""
    etag = f'"{view.table.version}"'
    if req.none_match(etag):
        return current_app.response_class(status=304, headers={**BY_CALLER, "ETag": etag})
    return state_answer(view)


def created_answer(game_id: str, version: int, players: list[dict[str, Any]],
                   tokens: dict[int, str],
                   notify: dict[str, str] | None = None) -> dict[str, Any]:
    """Return the answer to `POST /v1/games` (CreatedOut's shape): each human seat's token
    and the notifications' secret, shown once; `players` as CreateGameIn loads them
    (PlayerIn's keys, in its order)."""
    seats = [{"seat": s, **p, **({"token": tokens[s]} if s in tokens else {})}
             for s, p in enumerate(players)]
    shown = {} if notify is None else {"notify": notify}
    return {"game_id": game_id, "version": version, "seats": seats, **shown}


@bp.post("/games")
def create_game() -> Response:
    """Create a game; the answer shows each human seat's token once."""
    body = req.load_body(_create_in)
    created = games().create(body["players"], body["rules"], body["seed"], asking_client(),
                             body["notify"])
    location = url_for("games.get_game", game_id=created.game_id)
    return answer(created_answer(created.game_id, created.state.version, body["players"],
                                 created.tokens, created.notify), 201, {"Location": location})


@bp.get("/games/<game_id>")
def get_game(game_id: str) -> Response:
    """The current state as the caller's seat (or a spectator) may see it."""
    seat = caller_seat(game_id, required=False)
    return read_state_answer(games().current_view(game_id, seat))


@bp.post("/games/<game_id>/moves")
def post_move(game_id: str) -> Response:
    """Submit a move for the caller's seat."""
    seat = caller_seat(game_id, required=True)
    assert seat is not None
    if_match, key = req.gather(req.if_match, req.idempotency_key)
    try:
        body = req.load_body(_move_in[games().variant_name(game_id)])
    except problems.BadRequest as refused:  # under a key, the key's first answer comes first
        if key is None:
            raise
        kept = InvalidRequest(refused.detail, **refused.extra)
        return state_answer(games().refuse_move(game_id, seat, key, req.body_digest(), kept))
    return state_answer(games().move(game_id, seat, body, if_match, key))


@bp.post("/games/<game_id>/leave")
def leave(game_id: str) -> Response:
    """Hand the caller's seat to an AI for the rest of the match (API.md "Leaving")."""
    seat = caller_seat(game_id, required=True)
    assert seat is not None
    body = req.load_body(_leave_in)
    return state_answer(games().leave(game_id, seat, body["replace_with"]))


@bp.get("/games/<game_id>/events")
def get_events(game_id: str) -> Response:
    """The event log after `?after=N`, redacted for the caller until the match ends."""
    seat = caller_seat(game_id, required=False)
    after = req.int_arg("after", minimum=0) or 0
    return answer({"events": games().events(game_id, seat, after)}, headers=BY_CALLER)


@bp.get("/games/<game_id>/state")
def get_state_at(game_id: str) -> Response:
    """The state as it was after event `?version=N`, rebuilt by replay."""
    seat = caller_seat(game_id, required=False)
    version = req.int_arg("version", minimum=1, required=True)
    assert version is not None
    return read_state_answer(games().view_at(game_id, seat, version))


@bp.get("/games/<game_id>/export")
def export(game_id: str) -> Response:
    """The complete, unredacted log of an ended match, for audit."""
    return answer({"game_id": game_id, "events": games().export(game_id)})
