"""Tiles of the Spinner set (R1), their notation (R2) and value (R3)."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from operator import attrgetter
from typing import Final

from service.rules.errors import MalformedMove

SPINNER: Final = 10
"""The wild half `S`, numbered 10 so that it sorts last and counts 10 (R3)."""

_LOOSE = re.compile(r"\s*(10|[0-9sS])\s*[-_/|:\u2010-\u2015\u2212\ufe63\uff0d]\s*(10|[0-9sS])\s*")
"""A tile spelt loosely: a lower-case `s`, a spinner half as `10` (R3), spaces, another dash
or separator (`9 – 3`, `s/5`, `10-2`), halves in any order. It names one tile (R2)."""
_SHOWN_CHARS = 16
"""Text sent as a tile is quoted back in an error up to this length."""


def _half(n: int) -> str:
    return "S" if n == SPINNER else str(n)


class Tile:
    """One tile, `lo-hi` with lo <= hi and the spinner half as 10 (R1, R2)."""

    # Tiles are singletons with no __eq__ or ordering: `in`, `remove` and `index` on lists
    # of tiles compare identities, at C speed.
    __slots__ = ("lo", "hi", "value", "is_double", "wild_halves", "index", "text")

    lo: int
    hi: int
    value: int
    is_double: bool
    wild_halves: int
    index: int
    text: str

    def __init__(self, lo: int, hi: int, index: int) -> None:
        self.lo, self.hi, self.index = lo, hi, index
        self.value = lo + hi
        self.is_double = lo == hi
        self.wild_halves = (lo == SPINNER) + (hi == SPINNER)
        self.text = f"{_half(lo)}-{_half(hi)}"

    @staticmethod
    def parse(text: object) -> Tile:
        """Return the tile written `text` (R2), or raise MalformedMove naming the canonical form."""
        try:
            return _BY_TEXT[text]  # the usual case first: one look-up, no other work
        except (KeyError, TypeError):  # TypeError: `text` is unhashable, so not a tile either
            raise spelling_error(text, TILES) from None

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Tile.parse({self.text!r})"

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (Tile.parse, (self.text,))


def _build_set() -> tuple[Tile, ...]:
    pairs = [(a, b) for a in range(10) for b in range(a, 10)]
    pairs += [(a, SPINNER) for a in range(10)] + [(SPINNER, SPINNER)]
    return tuple(Tile(a, b, i) for i, (a, b) in enumerate(pairs))


TILES: Final = _build_set()
"""The 66 tiles of R1: the double-nine set, then `0-S` … `9-S`, then `S-S`."""

_BY_TEXT: Final[dict[object, Tile]] = {t.text: t for t in TILES}
_BY_HALVES: Final = {(t.lo, t.hi): t for t in TILES}
DOUBLE_SPINNER: Final = _BY_TEXT["S-S"]


TEXT: Final = attrgetter("text")
"""A tile's text (R2), for `map` over tiles."""

VALUE: Final = attrgetter("value")
"""A tile's pips, for `map` over tiles."""


def parse_tiles(texts: Sequence[object]) -> list[Tile]:
    """Return the tiles written `texts` (R2); raise as `Tile.parse` does for one that is not."""
    try:
        return list(map(_BY_TEXT.__getitem__, texts))  # the usual case: C speed, no frames
    except (KeyError, TypeError):
        return list(map(Tile.parse, texts))  # raises the R2 error of the first wrong one


def tile(lo: int, hi: int) -> Tile:
    """Return the tile with these two halves, in either order (10 is `S`)."""
    return _BY_HALVES[(lo, hi) if lo <= hi else (hi, lo)]


def double(n: int) -> Tile:
    """Return the double `n-n`."""
    return _BY_HALVES[(n, n)]


def spelling_error(text: object, tiles: Collection[Tile]) -> MalformedMove:
    """The R2 error for `text`, not a tile as written, in a game played with `tiles`: a
    spelling of one of them names its canonical form (`9-3`: write `3-9`; `s-s`: write
    `S-S`); anything else is no tile, of that set if it is not R1's whole set (All Fives':
    `7-1`, `S-5`), and the error says how its tiles are written."""
    match = _LOOSE.fullmatch(text) if isinstance(text, str) else None
    shown = repr(text) if len(repr(text)) <= _SHOWN_CHARS else "the text sent"
    if match is not None:
        meant = tile(*(SPINNER if h in ("s", "S", "10") else int(h) for h in match.groups()))
        if meant in tiles:
            return MalformedMove("R2", f"{shown} is not in canonical form: write {meant.text!r}")
    of_set = "" if len(tiles) == len(TILES) else " of this game's set"
    highest = max(h for t in tiles for h in (t.lo, t.hi) if h != SPINNER)
    halves = f"digits 0-{highest}" + (" or S" if any(t.wild_halves for t in tiles) else "")
    return MalformedMove("R2", f"{shown} is not a tile{of_set}: write A-B with {halves}")
