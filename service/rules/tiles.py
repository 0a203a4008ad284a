"""Tiles of the Spinner set (R1), their notation (R2) and value (R3)."""

from __future__ import annotations

import re
from typing import Final

from service.rules.errors import MalformedMove

SPINNER: Final = 10
"""The wild half `S`, numbered 10 so that it sorts last and counts 10 (R3)."""

_TEXT = re.compile(r"^([0-9S])-([0-9S])$")


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
    def parse(text: str) -> Tile:
        """Return the tile written `text` in the notation of R2, or raise MalformedMove."""
        return parse_tile(text)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Tile.parse({self.text!r})"

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (parse_tile, (self.text,))


def _build_set() -> tuple[Tile, ...]:
    pairs = [(a, b) for a in range(10) for b in range(a, 10)]
    pairs += [(a, SPINNER) for a in range(10)] + [(SPINNER, SPINNER)]
    return tuple(Tile(a, b, i) for i, (a, b) in enumerate(pairs))


TILES: Final = _build_set()
"""The 66 tiles of R1: the double-nine set, then `0-S` … `9-S`, then `S-S`."""

BY_TEXT: Final = {t.text: t for t in TILES}
_BY_HALVES: Final = {(t.lo, t.hi): t for t in TILES}
DOUBLE_SPINNER: Final = BY_TEXT["S-S"]


def tile(lo: int, hi: int) -> Tile:
    """Return the tile with these two halves, in either order (10 is `S`)."""
    return _BY_HALVES[(lo, hi) if lo <= hi else (hi, lo)]


def double(n: int) -> Tile:
    """Return the double `n-n`."""
    return _BY_HALVES[(n, n)]


def parse_tile(text: object) -> Tile:
    """Return the tile written `text` (R2), or raise MalformedMove naming the canonical form."""
    found = BY_TEXT.get(text) if isinstance(text, str) else None
    if found is not None:
        return found
    match = _TEXT.match(text) if isinstance(text, str) else None
    if match is None:
        raise MalformedMove("R2", f"{text!r} is not a tile: write A-B with digits 0-9 or S")
    a, b = (SPINNER if h == "S" else int(h) for h in match.groups())
    canonical = tile(a, b).text
    raise MalformedMove("R2", f"{text!r} is not in canonical form: write {canonical!r}")
