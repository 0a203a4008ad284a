"""What a play or a pass leads to (R18, R19, R20): written once for the commands and the AI.

Both ask after applying the move to the hand: `make_move` records the outcome as events,
the AI's playouts apply it to their copy of the hand directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:  # hand.py asks `after_pass` whether the server moves next
    from service.rules.hand import Hand

LIFT: Final = "lift"
"""R18: a round of passes lifts the pending obligations; play goes on."""

DOMINO: Final = "domino"
"""R19: the seat played its last tile; the hand ends (the `ended_by` of `hand_ended`)."""

BLOCKED: Final = "blocked"
"""R20: a round of passes with no obligation pending; the hand ends (as `ended_by`)."""


def after_play(hand: Hand, seat: int) -> str | None:
    """After `seat` played: DOMINO once it holds no tile (R19), else None."""
    return None if hand.tiles[seat] else DOMINO


def after_pass(hand: Hand) -> str | None:
    """After a pass: LIFT (R18) or BLOCKED (R20) once every seat has passed in succession
    with the boneyard empty, else None."""
    if hand.passes < hand.seats:
        return None
    return LIFT if hand.obligations else BLOCKED
