"""Points in All Fives: the count's score, the hand's end, rounding, leaders, the target
(F4, F5, F10, F12-F15)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from service.rules.tiles import VALUE, Tile

DEFAULT_TARGET: Final = 150
TARGETS: Final = range(50, 501, 5)
"""The targets a match may have (F15): a multiple of 5 from 50 to 500."""


def round_to_five(pips: int) -> int:
    """Round to the nearest multiple of five: 1, 2 down, 3, 4 up (F14)."""
    return (pips + 2) // 5 * 5


def play_points(count: int) -> int:
    """Return what a play scores that leaves the ends showing `count` (F10)."""
    return count if count > 0 and count % 5 == 0 else 0


def pips(tiles: Sequence[Tile]) -> int:
    """Return the pips on `tiles`."""
    return sum(map(VALUE, tiles))


def hand_points(tiles_by_seat: Sequence[Sequence[Tile]]) -> tuple[int | None, list[int]]:
    """Return an ended hand's winner (None: nobody) and what each seat scores at its end:
    the seat that went out (F12), else the one alone holding the fewest pips (F13), scores
    the pips of all the other hands, rounded (F14)."""
    held, counts = list(map(pips, tiles_by_seat)), list(map(len, tiles_by_seat))
    winner = counts.index(0) if 0 in counts else None
    if winner is None:
        fewest = min(held)
        if held.count(fewest) > 1:
            return None, [0] * len(held)
        winner = held.index(fewest)
    points = [0] * len(held)
    points[winner] = round_to_five(sum(held) - held[winner])
    return winner, points


def first_leader(drawn: Sequence[Tile]) -> int:
    """Return the seat whose drawn tile has the most pips, the higher half between equal
    totals (F4)."""
    return max(range(len(drawn)), key=lambda seat: (drawn[seat].value, drawn[seat].hi))


def next_leader(winner: int | None, leader: int) -> int:
    """Return who leads the next hand: the last hand's winner, else its leader again (F5)."""
    return leader if winner is None else winner
