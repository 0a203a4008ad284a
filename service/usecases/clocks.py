"""Turn clocks on the queue (API.md "Turn clocks"): one scheduled job per human turn, at its
deadline, scheduled after each append and scheduled again on a read if its job was lost."""

from __future__ import annotations

from typing import Any

from service.game.lifecycle import deadline
from service.game.state import Match
from service.usecases.context import Context


def due(state: Match[Any]) -> float | None:
    """Return the Unix time at which the human seat to move is timed out (None: no clock)."""
    when = deadline(state)
    return None if when is None else when.timestamp()


def schedule(ctx: Context, game_id: str, state: Match[Any]) -> None:
    """Schedule the clock of the human turn due at the state's version, if it has one."""
    when = due(state)
    if when is not None:
        ctx.queue.schedule_clock(game_id, state.version, when)


def heal(ctx: Context, game_id: str, state: Match[Any]) -> None:
    """Schedule the clock of the turn due now again if its job is lost."""
    when = due(state)
    if when is not None:
        ctx.queue.heal_clock(game_id, state.version, when)
