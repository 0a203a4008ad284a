"""The `greedy` level: shed the most points now, holding spinners back as wild cards."""

from __future__ import annotations

from service.rules.moves import Move
from service.rules.turns import targets
from workers.ai.seat_view import SeatView
from workers.ai.shedding import SHED_RANK, shed


def choose(view: SeatView) -> Move:
    """Play as `shed` does; before the opening, the best opener by `SHED_RANK` (R8: `d-d`
    before `S-S`); with no play, the one draw or pass R16 allows."""
    play = shed(view.tiles, view.drawn, targets(view)) if view.layout else None
    if play is not None:
        return Move("play", *play)
    return max(view.legal_moves, key=_rank)


def _rank(move: Move) -> int:
    return -1 if move.tile is None else SHED_RANK[move.tile.index]
