"""The AI levels by name, each a pure function of one seat's view (R25)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from service.game import events as ev
from service.game.state import GameState
from service.rules.moves import Move
from workers.ai import expert, greedy, random_level
from workers.ai.seat_view import SeatView, seat_view

Strategy = Callable[[SeatView, random.Random, float], Move]

STRATEGIES: dict[str, Strategy] = {
    "random": lambda view, rng, budget_s: random_level.choose(view, rng),
    "greedy": lambda view, rng, budget_s: greedy.choose(view),
    "expert": expert.choose,
}


def choose_move(level: str, view: SeatView, rng: random.Random, budget_s: float = 0.3) -> Move:
    """Return the move the AI of `level` makes from `view`, searching for at most `budget_s`."""
    return STRATEGIES[level](view, rng, budget_s)


def play_in_game(level: str, state: GameState, seat: int, log: Sequence[ev.Event],
                 rng: random.Random, budget_s: float) -> Move:
    """Spinner's AI entry point (its `Variant.ai`): the move of `level` for `seat` from that
    seat's view only (R25); `log` (the hand's events) gives the public history."""
    return choose_move(level, seat_view(state, seat, log), rng, budget_s)
