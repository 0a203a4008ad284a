"""The greedy policy, written once: the `greedy` level plays it and the expert's playouts
follow it. Shed the best tile by `SHED_RANK`, leaving the value the rest can follow most."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from service.rules.matching import EXPOSES, MATCH_VALUES, MATCHES, PLAYABLE_ON
from service.rules.tiles import TILES, Tile

Play = tuple[Tile, str, int]
"""A play on an end: the tile, the end id and the value it leaves."""

DOUBLE_BONUS = 5
"""A double's obligations (R17) can stall the table: greedy values it this many points more."""


def _rank(tile: Tile) -> int:
    return 100 * (not tile.wild_halves) + tile.value + DOUBLE_BONUS * tile.is_double


SHED_RANK: Final = tuple(_rank(t) for t in TILES)
"""SHED_RANK[tile.index]: greedy sheds spinners (wild, R13) last, else the most points first."""


def keep_counts(held: Sequence[Tile], played: Tile | None) -> list[int]:
    """Return, per value 0-9, how many of the tiles held but `played` (None: all of them)
    could go on an end of it."""
    counts = [0] * 10
    for tile in held:
        if tile is not played:
            for value in MATCH_VALUES[tile.index]:
                counts[value] += 1
    return counts


def shed(held: Sequence[Tile], drawn: Tile | None, ends: Mapping[str, int]) -> Play | None:
    """Return the greedy play on `ends` (the ends a play may go on, R17) of a seat holding
    `held`, only `drawn` playable once drawn (R16): the tile best by `SHED_RANK`, then the
    value most of the other tiles can follow; ties go to the first tile held, the lowest
    value, the first end. None when no tile can be played."""
    mask = 0
    for value in ends.values():
        mask |= 1 << value
    playable = held if drawn is None else (drawn,)
    best, top, tied = None, -1, False
    for tile in playable:
        rank = SHED_RANK[tile.index]
        if rank >= top and PLAYABLE_ON[tile.index] & mask:
            tied = rank == top
            if not tied:
                best, top = tile, rank
    if best is None:
        return None
    if tied:  # tiles of equal rank: the one leaving a value more of the others follow
        best, expose = _best_of_tied(playable, top, mask, held)
    else:
        expose = _best_value(best, held, mask)
    row = EXPOSES[best.index]
    for end, value in ends.items():  # the first end it can leave that value on
        if expose in row[value]:
            return best, end, expose
    raise AssertionError(f"{best} leaves {expose} on none of {ends}")


def _best_value(tile: Tile, held: Sequence[Tile], mask: int) -> int:
    """Return the value `tile` can leave on the end values in `mask` that most of the other
    tiles held follow, the lowest on ties."""
    row = EXPOSES[tile.index]
    leaves = [row[value] for value in MATCH_VALUES[tile.index] if mask >> value & 1]
    values = leaves[0] if len(leaves) == 1 else sorted({x for xs in leaves for x in xs})
    if len(values) == 1:  # the usual case: the tile can leave one value
        return values[0]
    return max(values, key=keep_counts(held, tile).__getitem__)


def _best_of_tied(playable: Sequence[Tile], rank: int, mask: int, held: Sequence[Tile]
                  ) -> tuple[Tile, int]:
    """Return the tile of `rank` playable on the end values in `mask` and the value it can
    leave that most of the other tiles held follow: the first tile, the lowest value on ties."""
    counts = keep_counts(held, None)  # each tile then takes itself off
    found, most = (playable[0], 0), -1
    for tile in playable:
        if SHED_RANK[tile.index] == rank and PLAYABLE_ON[tile.index] & mask:
            own, row = MATCHES[tile.index], EXPOSES[tile.index]
            for value in MATCH_VALUES[tile.index]:
                if mask >> value & 1:
                    for expose in row[value]:
                        follow = counts[expose] - (expose in own)
                        if follow > most or (
                                follow == most and found[0] is tile and expose < found[1]):
                            found, most = (tile, expose), follow
    return found
