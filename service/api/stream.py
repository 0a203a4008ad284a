"""`GET /v1/games/{id}/stream`: Server-Sent Events, redacted for the caller (R25), and the
stream tickets that open it without a header (a browser's EventSource)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

from flask import Blueprint, Response, current_app, request, stream_with_context

from service.api import requests as req
from service.api.answers import BY_CALLER, answer, caller_seat, games, to_json
from service.api.clients import asking_client
from service.api.games import state_body
from service.game import events as ev
from service.usecases.following import Followed, Turn
from service.usecases.seat_views import View

bp = Blueprint("stream", __name__, url_prefix="/v1")

TICKET = "ticket"
"""The query parameter of `/stream` that carries a stream ticket."""
WITH_STATE = "state"
"""The query parameter of `/stream` that asks for a `state` frame after each `turn` frame."""
TURN_EVENT = "event: turn"
STATE_EVENT = "event: state"
KEEP_ALIVE = ": keep-alive\n\n"
OPEN_STREAMS = "open_streams"
"""The app's extension that counts its open streams (`open_streams.OpenStreams`)."""
BATCH_BYTES = 64 * 1024
"""A batch of frames longer than this is sent in more than one chunk."""


@bp.get("/games/<game_id>/stream")
def stream(game_id: str) -> Response:
    """Send each new event as `id: <seq>`, each batch followed by an `event: turn` frame
    (and with `?state=true` an `event: state` frame: the caller's state then, as a GET
    answers it); resume after `Last-Event-ID` (or `?after=N`). A finished game with
    nothing after that point answers 204, which tells a browser's EventSource to stop
    reconnecting (it would reconnect to a 200 that ends, forever)."""
    seat = _stream_seat(game_id)
    keepalive = current_app.extensions["spinner"].settings.stream_keepalive_s
    resume, with_state = req.gather(_resume_point, partial(req.bool_arg, WITH_STATE))
    followed = games().follow(game_id, seat, resume, keepalive, with_state)
    if followed is None:  # the match has ended and every event was sent
        return current_app.response_class(status=204, headers={"Cache-Control": "no-cache"})
    release = current_app.extensions[OPEN_STREAMS].admit(asking_client().id)
    headers = {**BY_CALLER, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    response = Response(stream_with_context(_batched(_frames(followed), with_state)),
                        mimetype="text/event-stream", headers=headers)
    response.call_on_close(release)  # gunicorn closes it when the match ends or the client goes
    response.call_on_close(_release_when_gone(release))
    return response


def _release_when_gone(release: Callable[[], None]) -> Callable[[], None]:
    """Release a stream's place under the caps as soon as its client has gone, where the
    server can tell (`spinner serve`'s worker: the stream itself would notice only at its
    next write, up to a keep-alive later); return what stops the watching."""
    when_gone = getattr(request.environ.get("gunicorn.socket"), "when_gone", None)
    return when_gone(release) if when_gone else lambda: None


@bp.post("/games/<game_id>/stream-tickets")
def stream_ticket(game_id: str) -> Response:
    """A short-lived ticket that opens this game's stream as the caller's seat."""
    games().require_game(game_id)  # 404 for an unknown game first, as on every path
    ttl_s = current_app.extensions["spinner"].settings.stream_ticket_ttl_s
    ticket = games().stream_ticket(game_id, req.bearer_token(), ttl_s)
    return answer(ticket.to_dict(), headers={"Cache-Control": "no-store"})


def _stream_seat(game_id: str) -> int | None:
    """The seat the stream is redacted for: a `?ticket=`'s (then no Authorization is read),
    else the bearer token's, else None (a spectator)."""
    ticket = request.args.get(TICKET)
    if ticket is None:
        return caller_seat(game_id, required=False)
    return games().ticket_seat(game_id, ticket)


def _resume_point() -> int:
    last = request.headers.get("Last-Event-ID", "").strip()
    if req.is_number(last):
        return req.number(last)
    return req.int_arg("after", minimum=0) or 0


def _batched(frames: Iterator[str], with_state: bool) -> Iterator[str]:
    """Join the frames of each batch into one chunk, so that an append reaches the client in
    one write, not one a frame: a batch ends with its `state` frame (`with_state`), else its
    `turn` frame, or is a keep-alive; a long one (a finished log) is cut at BATCH_BYTES."""
    last = STATE_EVENT if with_state else TURN_EVENT
    parts: list[str] = []
    size = 0
    for frame in frames:
        parts.append(frame)
        size += len(frame)
        if frame.startswith((last, KEEP_ALIVE)) or size >= BATCH_BYTES:
            yield "".join(parts)
            parts, size = [], 0
    if parts:
        yield "".join(parts)


def _frames(followed: Followed) -> Iterator[str]:
    """The stream's frames: each event the use case lets the caller see (already redacted,
    R25), a `turn` frame after each batch of them (then, if asked, a `state` frame), and a
    comment when none came for a while (None)."""
    yield "retry: 2000\n\n"
    for item in followed:
        if item is None:
            yield KEEP_ALIVE
        elif isinstance(item, Turn):
            yield _turn_frame(item)
        elif isinstance(item, View):
            yield _state_frame(item)
        else:
            yield _frame(item)


def _frame(event: ev.Event) -> str:
    data = to_json(event).decode()  # as /events: EventOut's shape, as stored
    return f"id: {event['seq']}\nevent: {event['type']}\ndata: {data}\n\n"


def _turn_frame(turn: Turn) -> str:
    """No `id:` line: an EventSource keeps the seq of the event before it as its last event
    id, so a resumption sends nothing twice and misses nothing."""
    return f"{TURN_EVENT}\ndata: {to_json(turn.to_dict()).decode()}\n\n"


def _state_frame(view: View) -> str:
    """The caller's state at the turn frame's version, as `GET /v1/games/{id}` answers it
    (StateOut's shape, redacted alike, R25); no `id:` line, as a turn frame."""
    return f"{STATE_EVENT}\ndata: {to_json(state_body(view)).decode()}\n\n"
