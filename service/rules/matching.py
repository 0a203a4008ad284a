"""Which values a tile can leave on an end (R13, R14, R15), tabulated once."""

from __future__ import annotations

from typing import Final

from service.rules.tiles import SPINNER, TILES, Tile

ANY_VALUE: Final = tuple(range(10))


def exposes_on(tile: Tile, end_value: int) -> tuple[int, ...]:
    """Return the values `tile` can leave when played on an end of `end_value` (R13-R15)."""
    lo, hi = tile.lo, tile.hi
    if tile.is_double:
        # R15: a double (S-S standing for the end's double) leaves its own value.
        return (end_value,) if lo in (end_value, SPINNER) else ()
    if hi == SPINNER:
        # R14: `a-S` on an `a` end may leave any value; elsewhere the spinner touches and `a` shows.
        return ANY_VALUE if lo == end_value else (lo,)
    if lo == end_value:
        return (hi,)
    return (lo,) if hi == end_value else ()


EXPOSES: Final = tuple(tuple(exposes_on(t, v) for v in range(10)) for t in TILES)
"""EXPOSES[tile.index][end value] is what `exposes_on` returns, for the hot path."""

MATCHES: Final = tuple(frozenset(v for v in range(10) if EXPOSES[t.index][v]) for t in TILES)
"""MATCHES[tile.index] is the set of end values the tile can be played on."""

MATCH_VALUES: Final = tuple(tuple(sorted(values)) for values in MATCHES)
"""MATCH_VALUES[tile.index] lists the end values the tile can be played on, ascending."""

PLAYABLE_ON: Final = tuple(sum(1 << v for v in values) for values in MATCHES)
"""PLAYABLE_ON[tile.index] has bit v set when the tile can be played on an end of value v."""
