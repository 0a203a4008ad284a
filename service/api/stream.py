"""`GET /v1/games/{id}/stream`: Server-Sent Events, redacted for the caller (R25)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from flask import Blueprint, Response, current_app, request, stream_with_context

from service.api import requests as req
from service.api.answers import BY_CALLER, caller_seat, games, to_json
from service.game import events as ev
from service.game.views import redact
from service.usecases.ports import EventStore

bp = Blueprint("stream", __name__, url_prefix="/v1")


@bp.get("/games/<game_id>/stream")
def stream(game_id: str) -> Response:
    """Send each new event as `id: <seq>`; resume after `Last-Event-ID` (or `?after=N`)."""
    seat = caller_seat(game_id, required=False)
    version, status = games().progress(game_id)
    after = min(_resume_point(), version)  # an id beyond the log would wait past the end
    finished = status == "finished"
    keepalive = current_app.extensions["spinner"].settings.stream_keepalive_s
    store = current_app.extensions["spinner"].store
    frames = _frames(store, game_id, seat, after, finished, keepalive,
                     lambda: games().progress(game_id))
    headers = {**BY_CALLER, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return Response(stream_with_context(frames), mimetype="text/event-stream", headers=headers)


def _resume_point() -> int:
    last = request.headers.get("Last-Event-ID", "").strip()
    if req.is_number(last):
        return req.number(last)
    return req.int_arg("after", minimum=0) or 0


def _frames(store: EventStore, game_id: str, seat: int | None, after: int, finished: bool,
            keepalive_s: float, on_quiet: Callable[[], object]) -> Iterator[str]:
    """The stream's frames; `on_quiet` runs when no event came for `keepalive_s` (it
    re-queues a lost AI turn, which nothing else may read the game to notice)."""
    yield "retry: 2000\n\n"
    if finished:  # the whole log is public now; send what is left and close
        yield from (_frame(event) for event in store.read(game_id, after))
        return
    while True:
        events = store.wait_for_events(game_id, after, int(keepalive_s * 1000))
        if not events:
            on_quiet()
            yield ": keep-alive\n\n"
        ended = any(event["type"] == ev.GAME_ENDED for event in events)
        for event in events:  # the append that ends the match is sent whole, as /events is
            yield _frame(event if ended else redact(event, seat))
            after = event["seq"]
            if event["type"] == ev.GAME_ENDED:
                return


def _frame(event: ev.Event) -> str:
    data = to_json(event).decode()  # as /events: EventOut's shape, as stored
    return f"id: {event['seq']}\nevent: {event['type']}\ndata: {data}\n\n"
