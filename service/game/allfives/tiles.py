"""The double-six set of All Fives (F1): 28 of the Spinner set's tiles, no wild halves."""

from __future__ import annotations

from typing import Final

from service.rules.errors import IllegalMove
from service.rules.tiles import TILES, Tile

HIGHEST: Final = 6
"""The highest half of the double-six set."""

FIVES_SET: Final = tuple(t for t in TILES if t.hi <= HIGHEST)
"""The 28 tiles `a-b`, 0 <= a <= b <= 6, in the order of R1's set (F1)."""

IN_SET: Final = frozenset(FIVES_SET)


def check_in_set(tile: Tile) -> Tile:
    """Return `tile` if All Fives plays with it, else raise IllegalMove naming F1: a tile
    spelled as R2 says fits the move's schema (API.md: 400 is for what does not), so one of
    no double-six set is a move the rules forbid (422)."""
    if tile not in IN_SET:
        raise IllegalMove("F1", f"{tile} is not a tile of the double-six set")
    return tile
