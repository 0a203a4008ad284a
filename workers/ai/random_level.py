"""The `random` level: any legal move, uniformly."""

from __future__ import annotations

import random

from service.rules.moves import Move
from workers.ai.seat_view import SeatView


def choose(view: SeatView, rng: random.Random) -> Move:
    """Return a uniformly random legal move."""
    return rng.choice(view.legal_moves)
