"""The state of one All Fives hand: seats' tiles, boneyard, the layout's ends and count (F3-F13)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from service.rules.hand import END_IDS
from service.rules.tiles import Tile

Play = tuple[Tile, str | None, int | None]
"""A tile as played: the tile, the end it went on (None: the lead) and the value it left
there (None for the lead, which leaves both its halves)."""


def tiles_per_seat(seats: int) -> int:
    """Return how many tiles each seat is dealt (F3): 7 with 2 players, else 5."""
    return 7 if seats == 2 else 5


class FivesHand:
    """One hand in play; its methods apply facts that have already been decided.

    `ends` are the open ends a tile may go on (id -> value, F7, F8); `shows` what each open
    end adds to the count (F9): its value, twice it for a double lying across, nothing for
    a narrow side no tile lies on, and `count` their sum. `long_ends` are the spinner's long
    ends not yet covered, `sides` its narrow sides, not open until no long end is left
    uncovered (F8).
    """

    __slots__ = ("number", "seats", "leader", "tiles", "boneyard", "ends", "shows", "count",
                 "long_ends", "sides", "spinner", "layout", "next_end", "turn", "passes")

    def __init__(self, number: int, seats: int, leader: int) -> None:
        self.number, self.seats, self.leader = number, seats, leader
        self.tiles: list[list[Tile]] = [[] for _ in range(seats)]
        self.boneyard: list[Tile] = []
        self.ends: dict[str, int] = {}
        self.shows: dict[str, int] = {}
        self.count = 0  # the pips the open ends show now (F9): the sum of `shows`
        self.long_ends: list[str] = []
        self.sides: list[str] = []
        self.spinner: Tile | None = None
        self.layout: list[Play] = []
        self.next_end = 1
        self.turn = leader
        self.passes = 0  # passes in succession, all with the boneyard empty (F13)

    @classmethod
    def deal(cls, number: int, deck: Sequence[Tile], leader: int, seats: int) -> FivesHand:
        """Deal `deck` (F3): seat s gets deck[s*k:(s+1)*k], the rest is the boneyard."""
        hand = cls(number, seats, leader)
        k = tiles_per_seat(seats)
        hand.tiles = [list(deck[s * k:(s + 1) * k]) for s in range(seats)]
        hand.boneyard = list(deck[seats * k:])
        return hand

    @property
    def opening_double(self) -> None:
        """None: All Fives opens with any tile (F6, F16)."""
        return None

    @property
    def obligations(self) -> tuple[str, ...]:
        """None owed: any open end takes a play (F16)."""
        return ()

    @property
    def awaiting_server(self) -> bool:
        """Whether the hand's end comes next (F12 domino, F13 block): the append of the move
        that ends it records it, so only a state at that move's version (a replay's) is
        here, and it offers no move."""
        return not all(self.tiles) or self.blocked

    def count_after(self, tile: Tile, end: str | None, expose: int | None) -> int:
        """Return the count once `tile` is played on `end` leaving `expose` (F9), without
        playing it: what `apply_play` will make it."""
        if end is None:  # a lead shows both halves; a leading spinner shows itself once
            return tile.value
        count = self.count - self.shows[end]
        if end in self.long_ends and len(self.long_ends) == 2:  # the other shows it whole
            count += self.ends[end]
        assert expose is not None
        return count + (expose * 2 if tile.is_double else expose)

    @property
    def blocked(self) -> bool:
        """Whether every seat has passed in succession with the boneyard empty (F13)."""
        return self.passes >= self.seats

    def new_end_ids(self, tile: Tile, end: str | None) -> list[str]:
        """Return the ids a play of `tile` on `end` opens (F8): two for a plain lead, four for
        a leading spinner, three for a spinner played on an end, else one."""
        spinner = tile.is_double and self.spinner is None
        first = self.next_end
        last = first + 1 + 2 * spinner + (end is None)
        return END_IDS[first:last]  # a hand opens at most 4 + 2 + 27 ids, END_IDS has 128

    def apply_play(self, seat: int, tile: Tile, end: str | None, expose: int | None,
                   new_ends: Sequence[str]) -> None:
        """Seat plays `tile` on `end` (None: the lead, F6), opening `new_ends` (F7, F8)."""
        self.tiles[seat].remove(tile)
        if end is None:
            self._lead(tile, new_ends)
        else:
            assert expose is not None  # a play on an end leaves one value (F7)
            ends, shows, opened = self.ends, self.shows, new_ends[0]
            del ends[end]  # the tile covers `end`
            count = self.count - shows.pop(end)
            if self.long_ends and end in self.long_ends:
                count += self._cover_long_end(end)
            ends[opened] = expose
            if not tile.is_double:
                shows[opened] = expose
                self.count = count + expose
            else:
                shows[opened] = expose * 2
                self.count = count + expose * 2
                if self.spinner is None:  # F8: the first double is the spinner
                    self.spinner, self.long_ends, self.sides = tile, [opened], list(new_ends[1:])
        self.layout.append((tile, end, expose))
        self.next_end += len(new_ends)
        self.passes = 0
        self.turn = (seat + 1) % self.seats

    def _lead(self, tile: Tile, new_ends: Sequence[str]) -> None:
        """The lead lies alone (F6): a spinner's long ends show it once between them (F9)."""
        if tile.is_double:
            east, west, *sides = new_ends
            self.spinner, self.long_ends, self.sides = tile, [east, west], sides
            self.ends = {east: tile.lo, west: tile.lo}
        else:
            first, second = new_ends
            self.ends = {first: tile.lo, second: tile.hi}
        self.shows, self.count = dict(self.ends), tile.value

    def _cover_long_end(self, end: str) -> int:
        """A tile covers the spinner's long end `end`: its last long end shows the double
        whole, and once both are covered its narrow sides open (F8, F9); return what that
        adds to the count."""
        self.long_ends.remove(end)
        assert self.spinner is not None
        if self.long_ends:
            other = self.long_ends[0]
            added = self.spinner.value - self.shows[other]
            self.shows[other] = self.spinner.value
            return added
        for side in self.sides:
            self.ends[side], self.shows[side] = self.spinner.lo, 0
        self.sides = []
        return 0

    def apply_draw(self, seat: int, drawn: Tile) -> None:
        """Seat draws `drawn` from the front of the boneyard and keeps the turn (F11)."""
        if not self.boneyard or self.boneyard[0] is not drawn:
            raise ValueError(f"the boneyard does not yield {drawn} next")
        del self.boneyard[0]
        self.tiles[seat].append(drawn)

    def apply_pass(self, seat: int) -> None:
        """Seat passes (F11); passes in succession are counted (F13)."""
        self.passes += 1
        self.turn = (seat + 1) % self.seats

    def clone(self) -> FivesHand:
        """Return an independent copy for search; only the immutable tiles are shared."""
        other = FivesHand.__new__(FivesHand)
        other.number, other.seats, other.leader = self.number, self.seats, self.leader
        other.tiles = [list(held) for held in self.tiles]
        other.boneyard = list(self.boneyard)
        other.ends, other.shows, other.count = dict(self.ends), dict(self.shows), self.count
        other.long_ends, other.sides = list(self.long_ends), list(self.sides)
        other.spinner, other.layout = self.spinner, list(self.layout)
        other.next_end, other.turn, other.passes = self.next_end, self.turn, self.passes
        return other

    def to_dict(self) -> dict[str, Any]:
        """Return the hand as plain data (for snapshots and comparisons)."""
        return {
            "number": self.number, "seats": self.seats, "leader": self.leader,
            "tiles": [[t.text for t in held] for held in self.tiles],
            "boneyard": [t.text for t in self.boneyard],
            "ends": dict(self.ends), "shows": dict(self.shows),
            "long_ends": list(self.long_ends), "sides": list(self.sides),
            "spinner": self.spinner.text if self.spinner else None,
            "layout": [[t.text, end, x] for t, end, x in self.layout],
            "next_end": self.next_end, "turn": self.turn, "passes": self.passes,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FivesHand:
        """Rebuild a hand from `to_dict` output (a snapshot)."""
        hand = cls(data["number"], data["seats"], data["leader"])
        hand.tiles = [[Tile.parse(t) for t in held] for held in data["tiles"]]
        hand.boneyard = [Tile.parse(t) for t in data["boneyard"]]
        hand.ends, hand.shows = dict(data["ends"]), dict(data["shows"])
        hand.count = sum(hand.shows.values())
        hand.long_ends, hand.sides = list(data["long_ends"]), list(data["sides"])
        hand.spinner = Tile.parse(data["spinner"]) if data["spinner"] else None
        hand.layout = [(Tile.parse(t), end, x) for t, end, x in data["layout"]]
        hand.next_end, hand.turn, hand.passes = data["next_end"], data["turn"], data["passes"]
        return hand
