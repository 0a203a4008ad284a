"""Reading a game: its view now or at a version, its log as a seat may see it (R25) and its
export (`following` sends its events as they come). Each read of the current state heals a
lost AI turn."""

from __future__ import annotations

from service.game import events as ev
from service.game.variants import replay_log
from service.game.views import visible_log
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
        raise NoSuchVersion(f"no such version: this game's are 1..{current}")
    return view_of(ctx, game_id, replay_log(ctx.store.read(game_id, 0, version)), seat)


def events(ctx: Context, game_id: str, seat: int | None, after: int) -> list[ev.Event]:
    """Return the log after `after`, redacted for `seat` until the match has ended (R25)."""
    finished = progress(ctx, game_id)[1] == "finished"
    return visible_log(ctx.store.read(game_id, after), seat, finished)


def export(ctx: Context, game_id: str) -> list[ev.Event]:
    """Return the complete log of an ended match; NotFinished before it ends."""
    if progress(ctx, game_id)[1] != "finished":
        raise NotFinished("the export is available once the match has ended")
    return ctx.store.read(game_id)
