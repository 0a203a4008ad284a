"""Compact All Fives positions for the F-rule tests: one line sets up a mid-hand table.

`fives_at("0: 5-5 4-6 | 1: 1-2 | boneyard: 3-3 | layout: 6-6, 2-6 e1 | totals: 10 0")`
puts seat 0's and seat 1's tiles, the boneyard (front first) and the plays so far (in
`Move.parse`'s form: the lead alone, then `tile end`) into a real `FivesState`, so that
moves go through the All Fives `make_move` and its events. Parts: `N: tiles`, `boneyard:`,
`layout:` (played in turn from the leader, seat `lead N`, 0 by default), `totals:`,
`target N` (150), `lead N`; seat to move: the one after the layout's last play.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from service.game import events as ev
from service.game.allfives.commands import create_game, make_move
from service.game.allfives.hand import FivesHand
from service.game.allfives.state import FivesState
from service.game.allfives.tiles import FIVES_SET
from service.game.allfives.turns import check_move, legal_moves
from service.game.commands import Shuffle
from service.game.fairness import Shuffled
from service.rules.moves import Move
from service.rules.tiles import Tile

AT = "2024-05-01T12:00:00Z"


def tiles(text: str) -> list[Tile]:
    """Return the tiles written in `text`, separated by spaces."""
    return [Tile.parse(t) for t in text.split()]


def shuffles(seed: int) -> Shuffle:
    """Return a Shuffle dealing every hand (and the leader draw, hand 0) a seeded 28-tile deck."""
    return lambda number: Shuffled(random.Random(seed * 100 + number).sample(FIVES_SET, 28))


def players(seats: int) -> list[dict[str, Any]]:
    """Return `seats` AI players."""
    return [{"name": f"P{s}", "kind": "ai", "level": "random"} for s in range(seats)]


def rules(target: int = 150) -> dict[str, Any]:
    """Return All Fives rules with `target`."""
    return {"variant": "all_fives", "target": target}


def parse(text: str) -> tuple[FivesHand, dict[str, str]]:
    """Build the hand `text` writes; return it and the parts it did not use."""
    parts = dict(p.strip().partition(":")[::2] if ":" in p else p.strip().partition(" ")[::2]
                 for p in text.split("|"))
    parts = {k.strip(): v.strip() for k, v in parts.items()}
    held = {int(k): tiles(v) for k, v in parts.items() if k.isdigit()}
    leader = int(parts.get("lead", 0))
    hand = FivesHand(1, max(held) + 1, leader)
    hand.tiles = [held.get(s, []) for s in range(hand.seats)]
    hand.boneyard = tiles(parts.get("boneyard", ""))
    for play in filter(None, (p.strip() for p in parts.get("layout", "").split(","))):
        move = Move.parse(play)
        assert move.tile is not None
        hand.tiles[hand.turn].append(move.tile)  # the player held it
        _, tile, end, expose = check_move(hand, hand.turn, move)
        assert tile is not None
        hand.apply_play(hand.turn, tile, end, expose, hand.new_end_ids(tile, end))
    return hand, parts


@dataclass
class Match:
    """A match under test and the events its last move recorded."""

    state: FivesState
    shuffle: Shuffle
    new: list[ev.Event] = field(default_factory=list)

    @property
    def hand(self) -> FivesHand:
        """The hand in play."""
        assert self.state.hand is not None
        return self.state.hand

    def play(self, seat: int, text: str) -> list[ev.Event]:
        """Make the move written `text` for `seat`; return its events."""
        self.new = make_move(self.state, seat, Move.parse(text), self.shuffle, AT, sealed=False)
        return self.new

    def legal(self, seat: int) -> list[str]:
        """Return the seat's legal moves in text form."""
        return [str(m) for m in legal_moves(self.hand, seat)]

    def types(self) -> list[str]:
        """Return the types of the last move's events."""
        return [e["type"] for e in self.new]

    def data(self, type_: str) -> dict[str, Any]:
        """Return the data of the last move's one event of `type_`."""
        (found,) = [e["data"] for e in self.new if e["type"] == type_]
        return found


def fives_at(text: str, seed: int = 1) -> Match:
    """Put the hand `text` writes into a real All Fives match of as many seats."""
    hand, parts = parse(text)
    shuffle = shuffles(seed)
    state, _ = create_game(players(hand.seats), rules(int(parts.get("target", 150))), shuffle,
                           AT, sealed=False)
    state.hand = hand
    if "totals" in parts:
        state.totals = [int(t) for t in parts["totals"].split()]
    return Match(state, shuffle)
