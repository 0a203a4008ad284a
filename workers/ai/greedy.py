"""The `greedy` level: shed the most points now, holding spinners back as wild cards."""

from __future__ import annotations

import random

from service.rules.moves import Move
from workers.ai.playout import SHED_RANK, keep_counts
from workers.ai.seat_view import SeatView


def choose(view: SeatView, rng: random.Random) -> Move:
    """Shed the best tile by `SHED_RANK`, leaving the value most of the rest can follow."""
    plays = [m for m in view.legal_moves if m.action == "play"]
    if not plays:
        return view.legal_moves[0]  # the one draw or pass R16 allows
    held = list(view.tiles)
    counts = {m.tile: keep_counts(held, m.tile) for m in plays if m.tile is not None}

    def score(m: Move) -> tuple[int, int]:
        assert m.tile is not None and m.expose is not None
        return SHED_RANK[m.tile.index], counts[m.tile][m.expose]

    best = max(score(m) for m in plays)
    return rng.choice([m for m in plays if score(m) == best])
