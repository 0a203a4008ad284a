"""`GET /v1/games/{id}/stream`: Server-Sent Events, redacted for the caller (R25)."""

from __future__ import annotations

from collections.abc import Iterator

from flask import Blueprint, Response, current_app, request, stream_with_context

from service.api import requests as req
from service.api.answers import BY_CALLER, caller_seat, games, to_json
from service.game import events as ev

bp = Blueprint("stream", __name__, url_prefix="/v1")


@bp.get("/games/<game_id>/stream")
def stream(game_id: str) -> Response:
    """Send each new event as `id: <seq>`; resume after `Last-Event-ID` (or `?after=N`).
    A finished game with nothing after that point answers 204, which tells a browser's
    EventSource to stop reconnecting (it would reconnect to a 200 that ends, forever)."""
    seat = caller_seat(game_id, required=False)
    keepalive = current_app.extensions["spinner"].settings.stream_keepalive_s
    followed = games().follow(game_id, seat, _resume_point(), keepalive)
    if followed is None:  # the match has ended and every event was sent
        return current_app.response_class(status=204, headers={"Cache-Control": "no-cache"})
    headers = {**BY_CALLER, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return Response(stream_with_context(_frames(followed)), mimetype="text/event-stream",
                    headers=headers)


def _resume_point() -> int:
    last = request.headers.get("Last-Event-ID", "").strip()
    if req.is_number(last):
        return req.number(last)
    return req.int_arg("after", minimum=0) or 0


def _frames(followed: Iterator[ev.Event | None]) -> Iterator[str]:
    """The stream's frames: each event the use case lets the caller see (already redacted,
    R25), and a comment when none came for a while (None)."""
    yield "retry: 2000\n\n"
    for event in followed:
        yield ": keep-alive\n\n" if event is None else _frame(event)


def _frame(event: ev.Event) -> str:
    data = to_json(event).decode()  # as /events: EventOut's shape, as stored
    return f"id: {event['seq']}\nevent: {event['type']}\ndata: {data}\n\n"
