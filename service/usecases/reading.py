"""Reading a game: its view now or at a version, its log as a seat may see it (R25), its
export, and its events as they come. Each read of the current state heals a lost AI turn."""

from __future__ import annotations

from collections.abc import Iterator

from service.game import events as ev
from service.game.state import replay
from service.game.views import redact, visible_log
from service.usecases.ai_turns import heal
from service.usecases.context import Context
from service.usecases.errors import NoSuchVersion, NotFinished
from service.usecases.loading import keep, load, no_such_game
from service.usecases.seat_views import View, view_of


def current_view(ctx: Context, game_id: str, seat: int | None) -> View:
    """Return the state as `seat` sees it, re-queueing a lost AI turn on the way."""
    state = load(ctx, game_id)
    shown = view_of(ctx, game_id, state, seat)
    heal(ctx, game_id, state)
    keep(ctx, game_id, state)  # given back last: another request may then change it
    return shown


def progress(ctx: Context, game_id: str) -> tuple[int, str]:
    """Return the game's version and status (`playing`, `finished`), re-queueing a lost AI
    turn on the way (the log's readers and a waiting stream call it)."""
    state = load(ctx, game_id)
    heal(ctx, game_id, state)
    keep(ctx, game_id, state)
    return state.version, state.status


def view_at(ctx: Context, game_id: str, seat: int | None, version: int) -> View:
    """Return the state as it was after event `version`, rebuilt by replay (R26)."""
    current = ctx.store.version(game_id)
    if current == 0:
        raise no_such_game()
    if not 1 <= version <= current:
        raise NoSuchVersion(f"version {version} is not in 1..{current}")
    return view_of(ctx, game_id, replay(ctx.store.read(game_id, 0, version)), seat)


def events(ctx: Context, game_id: str, seat: int | None, after: int) -> list[ev.Event]:
    """Return the log after `after`, redacted for `seat` until the match has ended (R25)."""
    finished = progress(ctx, game_id)[1] == "finished"
    return visible_log(ctx.store.read(game_id, after), seat, finished)


def export(ctx: Context, game_id: str) -> list[ev.Event]:
    """Return the complete log of an ended match; NotFinished before it ends."""
    if progress(ctx, game_id)[1] != "finished":
        raise NotFinished("the export is available once the match has ended")
    return ctx.store.read(game_id)


def follow(ctx: Context, game_id: str, seat: int | None, resume: int,
           quiet_s: float) -> Iterator[ev.Event | None] | None:
    """Return the events after `resume` (at most the version now) as `seat` may see them
    (R25), as they come, until the match ends; None each time none came for `quiet_s`.
    None instead of them all once the match has ended with nothing left after `resume`."""
    version, status = progress(ctx, game_id)
    after = min(resume, version)  # a point beyond the log would wait past its end
    if status == "finished":  # the whole log is public now
        return None if after >= version else _rest_of_log(ctx, game_id, after)
    return _as_they_come(ctx, game_id, seat, after, int(quiet_s * 1000))


def _rest_of_log(ctx: Context, game_id: str, after: int) -> Iterator[ev.Event]:
    yield from ctx.store.read(game_id, after)


def _as_they_come(ctx: Context, game_id: str, seat: int | None, after: int,
                  quiet_ms: int) -> Iterator[ev.Event | None]:
    """The events as they are appended; when none came for `quiet_ms`, a lost AI turn is
    re-queued (nothing else may read the game to notice) and None is yielded."""
    while True:
        events = ctx.store.wait_for_events(game_id, after, quiet_ms)
        if not events:
            progress(ctx, game_id)
            yield None
        ended = any(event["type"] == ev.GAME_ENDED for event in events)
        for event in events:  # the append that ends the match is shown whole, as by `events`
            yield event if ended else redact(event, seat)
            after = event["seq"]
            if event["type"] == ev.GAME_ENDED:
                return
