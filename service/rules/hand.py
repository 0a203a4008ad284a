"""The state of one hand: seats' tiles, boneyard, layout, obligations and turn (R5-R20)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from service.rules.opening import (
    openers_in_hands,
    opening_double,
    opens_search,
    tiles_per_hand,
)
from service.rules.outcomes import after_pass
from service.rules.tiles import Tile

END_IDS: Final = [f"e{i}" for i in range(128)]
"""End ids by number, made once: a hand opens at most 4 + 3 * 10 + 55 of them. A list, so
that a slice of it is a new list of ids; never changed."""


def index_by_value(ends: Mapping[str, int]) -> list[list[str]]:
    """Return the ids of `ends` (id -> value) of each value 0-9, in their order."""
    return [[end for end, v in ends.items() if v == value] for value in range(10)]


class Hand:
    """One hand in play; its methods apply facts that have already been decided."""

    __slots__ = (
        "number", "rule", "seats", "shuffler", "tiles", "boneyard", "ends", "obligations",
        "layout", "next_end", "turn", "openers", "drawn", "passes", "ends_by_value",
    )

    def __init__(self, number: int, rule: str, seats: int, shuffler: int) -> None:
        self.number = number
        self.rule = rule
        self.seats = seats
        self.shuffler = shuffler
        self.tiles: list[list[Tile]] = [[] for _ in range(seats)]
        self.boneyard: list[Tile] = []
        self.ends: dict[str, int] = {}  # open end id -> value (R11), in order of creation
        # `ends` indexed for listing plays: the open end ids of each value 0-9, oldest first
        self.ends_by_value: list[list[str]] = [[] for _ in range(10)]
        self.obligations: list[str] = []  # end ids a play must go on now (R17)
        self.layout: list[tuple[Tile, str | None, int]] = []  # (tile, end, expose) as played
        self.next_end = 1
        self.turn: int | None = shuffler
        self.openers: tuple[Tile, ...] = ()  # tiles that may open, before the first play
        self.drawn: Tile | None = None  # the tile drawn this turn (R16)
        self.passes = 0  # passes in succession with the boneyard empty (R18, R20)

    @classmethod
    def deal(cls, number: int, rule: str, deck: Sequence[Tile], shuffler: int, seats: int) -> Hand:
        """Deal `deck` (R5): seat s gets deck[s*k:(s+1)*k], the rest is the boneyard."""
        hand = cls(number, rule, seats, shuffler)
        k = tiles_per_hand(seats)
        hand.tiles = [list(deck[s * k:(s + 1) * k]) for s in range(seats)]
        hand.boneyard = list(deck[seats * k:])
        found = openers_in_hands(hand.tiles, number, rule)
        if found is not None:
            hand.turn, hand.openers = found
        return hand

    @property
    def opening_double(self) -> Tile:
        """The `d-d` of R7 for this hand."""
        return opening_double(self.number)

    @property
    def searching(self) -> bool:
        """Whether R9's boneyard search is still under way."""
        return not self.openers and not self.layout

    @property
    def awaiting_server(self) -> bool:
        """Whether the server's own event comes next, so no seat may move: the R9 search, an
        R18 lift after a round of passes, or the end of the hand (R19 domino, R20 block)."""
        return self.searching or not all(self.tiles) or after_pass(self) is not None

    def next_seat(self, seat: int) -> int:
        """Return the seat to the left (R4)."""
        return (seat + 1) % self.seats

    def apply_search_draw(self, seat: int, drawn: Tile) -> None:
        """Seat draws `drawn` in the search (R9); it keeps it, and opens if it qualifies."""
        self._take_from_boneyard(seat, drawn)
        if opens_search(drawn, self.number, self.rule):
            self.turn, self.openers = seat, (drawn,)
        else:
            self.turn = self.next_seat(seat)

    def apply_draw(self, seat: int, drawn: Tile) -> None:
        """Seat draws `drawn` as its turn (R16)."""
        self._take_from_boneyard(seat, drawn)
        self.drawn = drawn

    def _take_from_boneyard(self, seat: int, drawn: Tile) -> None:
        if not self.boneyard or self.boneyard[0] is not drawn:
            raise ValueError(f"the boneyard does not yield {drawn} next")
        del self.boneyard[0]
        self.tiles[seat].append(drawn)

    def apply_play(self, seat: int, tile: Tile, end: str | None, expose: int,
                   new_ends: Sequence[str]) -> None:
        """Seat plays `tile` on `end`, opening `new_ends` of value `expose` (R10-R17)."""
        self.tiles[seat].remove(tile)
        obligations = self.obligations
        if end is None:  # R12: the opening double; east and west are owed first (R17)
            obligations[:] = new_ends[:2]
            self.openers = ()
        else:
            self.ends_by_value[self.ends.pop(end)].remove(end)
            if end in obligations:
                obligations.remove(end)
            if tile.is_double:  # R15, R17: three new ends, all owed
                obligations.extend(new_ends)
        ends = self.ends
        for end_id in new_ends:
            ends[end_id] = expose
        self.ends_by_value[expose] += new_ends
        self.layout.append((tile, end, expose))
        self.next_end += len(new_ends)
        self.drawn = None
        self.passes = 0
        self.turn = (seat + 1) % self.seats  # R4, as next_seat

    def apply_pass(self, seat: int) -> None:
        """Seat passes (R16); passes with an empty boneyard are counted (R18, R20)."""
        self.passes = self.passes + 1 if not self.boneyard else 0
        self.drawn = None
        self.turn = self.next_seat(seat)

    def set_ends(self, ends: Mapping[str, int]) -> None:
        """Make `ends` (id -> value, oldest first) the open ends: for positions built directly."""
        self.ends = dict(ends)
        self.ends_by_value = index_by_value(ends)

    def lift_obligations(self) -> None:
        """Lift every pending obligation (R18)."""
        self.obligations.clear()
        self.passes = 0

    def new_end_ids(self, tile: Tile, end: str | None) -> list[str]:
        """Return the ids the play of `tile` on `end` opens: 4 for the opener, 3 for a double."""
        first = self.next_end
        last = first + (4 if end is None else 3 if tile.is_double else 1)
        if last <= len(END_IDS):
            return END_IDS[first:last]
        return [f"e{i}" for i in range(first, last)]

    def clone(self) -> Hand:
        """Return an independent copy for search; only the immutable tiles are shared."""
        other = Hand.__new__(Hand)
        other.number, other.rule, other.seats = self.number, self.rule, self.seats
        other.shuffler, other.next_end, other.turn = self.shuffler, self.next_end, self.turn
        other.openers, other.drawn, other.passes = self.openers, self.drawn, self.passes
        other.tiles = [list(held) for held in self.tiles]
        other.boneyard = list(self.boneyard)
        other.ends = dict(self.ends)
        other.ends_by_value = [list(ids) for ids in self.ends_by_value]
        other.obligations = list(self.obligations)
        other.layout = list(self.layout)
        return other

    def to_dict(self) -> dict[str, Any]:
        """Return the hand as plain data (for snapshots and equality)."""
        return {
            "number": self.number, "rule": self.rule, "seats": self.seats,
            "shuffler": self.shuffler,
            "tiles": [[t.text for t in held] for held in self.tiles],
            "boneyard": [t.text for t in self.boneyard],
            "ends": dict(self.ends), "obligations": list(self.obligations),
            "layout": [[t.text, end, x] for t, end, x in self.layout],
            "next_end": self.next_end, "turn": self.turn,
            "openers": [t.text for t in self.openers],
            "drawn": self.drawn.text if self.drawn else None, "passes": self.passes,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Hand:
        """Rebuild a hand from `to_dict` output."""
        hand = cls(data["number"], data["rule"], data["seats"], data["shuffler"])
        hand.tiles = [[Tile.parse(t) for t in held] for held in data["tiles"]]
        hand.boneyard = [Tile.parse(t) for t in data["boneyard"]]
        hand.set_ends(data["ends"])
        hand.obligations = list(data["obligations"])
        hand.layout = [(Tile.parse(t), end, x) for t, end, x in data["layout"]]
        hand.next_end, hand.turn, hand.passes = data["next_end"], data["turn"], data["passes"]
        hand.openers = tuple(Tile.parse(t) for t in data["openers"])
        hand.drawn = Tile.parse(data["drawn"]) if data["drawn"] else None
        return hand
