"""Loading a game: the state this process keeps, or the latest snapshot, then later events."""

from __future__ import annotations

from typing import Any

from service.game.state import Match
from service.game.variants import replay_log, restore
from service.usecases.context import Context
from service.usecases.errors import NoSuchGame
from service.usecases.tokens import GAME_ID

NO_SUCH_GAME = "there is no game with that id"
"""The one detail of every unknown game's refusal: it names nothing that was sent (an id, or a
token sent in its place), and reads the same whatever the id's shape."""


def no_such_game() -> NoSuchGame:
    """Return the refusal for an unknown game."""
    return NoSuchGame(NO_SUCH_GAME)


def is_game_id(game_id: str) -> bool:
    """Whether `game_id` has the shape of the ids this service makes; no other is looked up
    (an id with a `}` would name another key's hash tag)."""
    return GAME_ID.fullmatch(game_id) is not None


def load(ctx: Context, game_id: str) -> Match[Any]:
    """Rebuild the game's state: a kept state or the latest snapshot, then later events. The
    caller has the state to itself; `keep` gives it back. A kept state of a game the store
    has forgotten (never moved in, it expired) is dropped: the game is unknown."""
    if not is_game_id(game_id):
        raise no_such_game()
    with ctx.meter.replay_timer():
        kept = ctx.states.take(game_id)
        later = None if kept is None else ctx.store.read_known(game_id, kept.version)
        if kept is not None and later is not None:
            return replay_log(later, kept)
        snapshot, events = ctx.store.load(game_id)
        if snapshot is None and not events:
            raise no_such_game()
        return replay_log(events, restore(snapshot["state"]) if snapshot else None)


def keep(ctx: Context, game_id: str, state: Match[Any]) -> None:
    """Give back a state that matches the log, for the next request to build on."""
    ctx.states.put(game_id, state)
