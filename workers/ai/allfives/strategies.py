"""The All Fives AI levels by name, each a pure function of one seat's view (R25)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from service.game import events as ev
from service.game.allfives.state import FivesState
from service.rules.moves import Move
from workers.ai.allfives import expert, greedy
from workers.ai.allfives.view import FivesView, fives_view

FivesStrategy = Callable[[FivesView, random.Random, float], Move]

FIVES_STRATEGIES: dict[str, FivesStrategy] = {
    "random": lambda view, rng, budget_s: rng.choice(view.legal_moves),
    "greedy": lambda view, rng, budget_s: greedy.choose(view),
    "expert": expert.choose,
}


def choose_fives_move(level: str, view: FivesView, rng: random.Random,
                      budget_s: float = 0.3) -> Move:
    """Return the move the All Fives AI of `level` makes from `view` within `budget_s`."""
    return FIVES_STRATEGIES[level](view, rng, budget_s)


def play_in_game(level: str, state: FivesState, seat: int, log: Sequence[ev.Event],
                 rng: random.Random, budget_s: float) -> Move:
    """All Fives' AI entry point (its `Variant.ai`): the move of `level` for `seat` from that
    seat's view only (R25, F16); `log` (the hand's events) gives what draws revealed."""
    return choose_fives_move(level, fives_view(state, seat, log), rng, budget_s)
