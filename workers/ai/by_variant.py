"""The AI of a game's variant: its seat's view and its levels, chosen by `rules.variant`."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from service.game import events as ev
from service.game.state import Match
from service.game.variants import ALL_FIVES, DEFAULT
from service.rules.moves import Move
from workers.ai.allfives.strategies import choose_fives_move
from workers.ai.allfives.view import fives_view
from workers.ai.seat_view import seat_view
from workers.ai.strategies import choose_move

Player = Callable[[str, Match[Any], int, Sequence[ev.Event], random.Random, float], Move]

PLAYERS: dict[str, Player] = {
    DEFAULT: lambda level, state, seat, log, rng, budget_s: choose_move(
        level, seat_view(state, seat, log), rng, budget_s),
    ALL_FIVES: lambda level, state, seat, log, rng, budget_s: choose_fives_move(
        level, fives_view(state, seat, log), rng, budget_s),
}


def choose_in_game(level: str, state: Match[Any], seat: int, log: Sequence[ev.Event],
                   rng: random.Random, budget_s: float) -> Move:
    """Return the move the AI of `level` makes for `seat` in a game of any variant, from
    that seat's view only (R25); `log` (the hand's events) gives the public history."""
    return PLAYERS[state.rules.get("variant", DEFAULT)](level, state, seat, log, rng, budget_s)
