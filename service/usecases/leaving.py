"""Leaving (API.md "Leaving"): a human seat hands itself to an AI for the rest of the match;
the AI takes its next turn as any AI turn (queued under its client's caps), and the game
counts among the client's open AI games."""

from __future__ import annotations

from service.game import lifecycle
from service.rules.errors import OutOfTurn
from service.usecases import errors
from service.usecases.ai_turns import client_of, queue_due
from service.usecases.context import Context
from service.usecases.creation import admit_game
from service.usecases.loading import keep, load
from service.usecases.ports import ConcurrencyError
from service.usecases.recording import append
from service.usecases.seat_views import View, view_of

ATTEMPTS = 3
"""Appends a leave tries before answering 409 race-lost: each loses only to another append."""


def leave(ctx: Context, game_id: str, seat: int, level: str) -> View:
    """Hand `seat` to an AI of `level` and return the seat's new view; 409 on a finished
    match (R24) or a seat that has left already. The game counts among its client's open AI
    games from then on, as a creation with AI seats does (TooManyAiGames past the cap)."""
    for _ in range(ATTEMPTS):
        state = load(ctx, game_id)
        expected = state.version
        try:
            events = lifecycle.leave(state, seat, level, ctx.clock())
        except OutOfTurn as error:
            keep(ctx, game_id, state)
            raise errors.OutOfTurn(error.detail, rule=error.rule) from error
        except lifecycle.LifecycleError as error:
            keep(ctx, game_id, state)
            raise errors.SeatLeft(str(error)) from error
        client = client_of(ctx, game_id)
        if client is not None:  # it has an AI seat from now on (counted once, however often)
            admit_game(ctx, client, game_id)
        try:
            append(ctx, game_id, expected, state, events)
        except ConcurrencyError as race:  # a move or a timeout landed first: decide again
            ctx.meter.append_conflict()
            version = race.current_version
            continue
        queue_due(ctx, game_id, state)
        shown = view_of(ctx, game_id, state, seat)
        keep(ctx, game_id, state)
        return shown
    raise errors.RaceLost("other moves kept landing first; leave again", version=version)
