"""The AI levels by name, each a pure function of one seat's view (R25)."""

from __future__ import annotations

import random
from collections.abc import Callable

from service.rules.moves import Move
from workers.ai import expert, greedy, random_level
from workers.ai.seat_view import SeatView

Strategy = Callable[[SeatView, random.Random, float], Move]

STRATEGIES: dict[str, Strategy] = {
    "random": lambda view, rng, budget_s: random_level.choose(view, rng),
    "greedy": lambda view, rng, budget_s: greedy.choose(view),
    "expert": expert.choose,
}


def choose_move(level: str, view: SeatView, rng: random.Random, budget_s: float = 0.3) -> Move:
    """Return the move the AI of `level` makes from `view`, searching for at most `budget_s`."""
    return STRATEGIES[level](view, rng, budget_s)
