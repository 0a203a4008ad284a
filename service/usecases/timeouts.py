"""A turn clock running out: the `turn_timed_out` of the seat to move and the move the
`random` AI picks for it, appended together at the version the deadline was set for, so a
move that landed first wins and the timeout does nothing (API.md "Turn clocks")."""

from __future__ import annotations

from service.game.lifecycle import deadline, time_out
from service.usecases.ai_turns import Chooser, queue_due, sleep_until
from service.usecases.context import Context
from service.usecases.loading import keep, load
from service.usecases.ports import ConcurrencyError
from service.usecases.recording import append, shuffle_of


def run_out(ctx: Context, game_id: str, version: int, choose: Chooser) -> bool:
    """Time out the human seat to move at `version` once its deadline has passed, with the
    move `choose` picks for it; False if the game has moved on (a stale clock)."""
    state = load(ctx, game_id)
    when = deadline(state)
    if state.version != version or when is None:
        keep(ctx, game_id, state)
        return False
    seat = state.turn
    assert seat is not None
    sleep_until(ctx, when.timestamp())  # a job run early (another host's clock) waits
    move = choose(state, seat, ctx.store.read(game_id, after=state.hand_seq - 1), 0.0)
    try:
        events = time_out(state, move, shuffle_of(ctx, game_id, state), ctx.clock())
        append(ctx, game_id, version, state, events)
    except ConcurrencyError:  # a move landed first: this clock was stale
        ctx.meter.append_conflict()
        return False
    ctx.meter.timeout_fired()
    queue_due(ctx, game_id, state)
    keep(ctx, game_id, state)
    return True
