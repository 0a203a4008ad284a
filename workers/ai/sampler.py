"""Determinization: deal the tiles a seat cannot see, consistently with everything public."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol

from service.rules.hand import Hand
from service.rules.tiles import Tile
from workers.ai.seat_view import SeatView, Void

ATTEMPTS = 20
Limit = tuple[frozenset[Tile], int]
"""A seat holds at most `n` of these tiles (n: the draws it made since it held none)."""

Deal = tuple[list[list[Tile]], list[Tile]]
"""Every seat's tiles and the boneyard, top first."""


class Hidden(Protocol):
    """What the sampler reads of a seat's view, Spinner's `SeatView` or All Fives'."""

    @property
    def seat(self) -> int:
        """The seat whose view it is."""

    @property
    def seats(self) -> int:
        """The number of seats."""

    @property
    def tiles(self) -> Sequence[Tile]:
        """The seat's own tiles."""

    @property
    def tile_counts(self) -> Sequence[int]:
        """How many tiles each seat holds."""

    @property
    def draws(self) -> Sequence[int]:
        """How many tiles each seat has drawn this hand."""

    @property
    def history(self) -> Sequence[Void]:
        """What others' draws and passes revealed they could not hold."""

    @property
    def unseen(self) -> list[Tile]:
        """The tiles the seat cannot see, in a new list."""


def limits(view: Hidden) -> list[list[Limit]]:
    """Return, per seat, what its draws and passes revealed it could not hold (R16)."""
    out: list[list[Limit]] = [[] for _ in range(view.seats)]
    for void in view.history:
        out[void.seat].append((void.tiles, view.draws[void.seat] - void.draws))
    return out


def deal_hidden(view: Hidden, rng: random.Random) -> Deal:
    """Return a random deal of the unseen tiles that fits the counts and every void."""
    seat_limits = limits(view)
    for _ in range(ATTEMPTS):
        dealt = _try_deal(view, seat_limits, rng)
        if dealt is not None:
            return dealt
    relaxed = _try_deal(view, [[] for _ in range(view.seats)], rng)  # counts alone always fit
    assert relaxed is not None
    return relaxed


def _try_deal(view: Hidden, seat_limits: list[list[Limit]], rng: random.Random) -> Deal | None:
    pool = view.unseen
    rng.shuffle(pool)
    hands: list[list[Tile]] = [[] for _ in range(view.seats)]
    hands[view.seat] = list(view.tiles)
    others = [s for s in range(view.seats) if s != view.seat]
    for seat in sorted(others, key=lambda s: -len(seat_limits[s])):  # most constrained first
        taken = _fill(pool, view.tile_counts[seat], seat_limits[seat])
        if taken is None:
            return None
        hands[seat], pool = taken
    return hands, pool


def _fill(pool: list[Tile], count: int, seat_limits: list[Limit]
          ) -> tuple[list[Tile], list[Tile]] | None:
    """Take the first `count` tiles of `pool` the limits allow; None if too few are allowed."""
    slack = [n for _, n in seat_limits]
    taken: list[Tile] = []
    rest: list[Tile] = []
    for tile in pool:
        if len(taken) < count and _allowed(tile, seat_limits, slack):
            taken.append(tile)
        else:
            rest.append(tile)
    return (taken, rest) if len(taken) == count else None


def _allowed(tile: Tile, seat_limits: list[Limit], slack: list[int]) -> bool:
    hit = [i for i, (tiles, _) in enumerate(seat_limits) if tile in tiles]
    if any(slack[i] <= 0 for i in hit):
        return False
    for i in hit:
        slack[i] -= 1
    return True


def world(view: SeatView, deal: Deal) -> Hand:
    """Return the hand as it would be if `deal` were the truth: a position to search from."""
    hands, boneyard = deal
    hand = Hand(view.hand_number, view.rule, view.seats, view.shuffler)
    hand.tiles = [list(held) for held in hands]
    hand.boneyard = list(boneyard)
    hand.set_ends(view.ends)
    hand.obligations = list(view.obligations)
    hand.layout = list(view.layout)
    hand.next_end, hand.turn, hand.passes = view.next_end, view.turn, view.passes
    hand.drawn = view.drawn
    if not view.layout:
        hand.openers = tuple(m.tile for m in view.legal_moves if m.tile is not None)
    return hand
