"""Compact positions for the rule tests: one line sets up a mid-hand situation.

`game_at("0: 3-S 5-6 | 1: 2-2 | boneyard: 1-1 4-S | ends: e1=3 e2=7 | owed: e1 | turn 0")`
puts the hand that the core's `parse_position` reads (service/rules/position.py lists every
part) inside a real `GameState`, as `game_with(hand)` puts any hand, so that moves go through
`make_move` and its events; moves are written as `Move.parse` reads and `str` writes them:
`draw`, `pass`, `9-9`, `3-5 e1`, `3-S e1 7`. `start([...seat tiles...], boneyard=...)`
builds a real deck and runs `create_game`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from service.game import events as ev
from service.game.commands import Shuffle, create_game, make_move
from service.game.fairness import Shuffled
from service.game.state import GameState, replay
from service.rules.errors import IllegalMove
from service.rules.hand import Hand
from service.rules.moves import Move
from service.rules.opening import tiles_per_hand
from service.rules.position import parse_position
from service.rules.tiles import TILES, Tile
from service.rules.turns import legal_moves

AT = "2024-05-01T12:00:00Z"
RULES = {"hands": 10, "opening": "draw"}


def tiles(text: str) -> list[Tile]:
    """Return the tiles written in `text`, separated by spaces: `"3-S 5-6"`."""
    return [Tile.parse(t) for t in text.split()]


def texts(held: Iterable[Tile]) -> list[str]:
    """Return the R2 spelling of each tile."""
    return [t.text for t in held]


def legal(hand: Hand, seat: int) -> list[str]:
    """Return the seat's legal moves (R16) in text form."""
    return [str(m) for m in legal_moves(hand, seat)]


def deck(hands: Sequence[str], boneyard: str = "") -> list[Tile]:
    """Return a 66-tile deck dealing these tiles (R5), the boneyard starting with `boneyard`.

    Each seat's tiles are padded with plain non-doubles in set order (`0-1`, `0-2`, ...), so
    padding never opens a hand but may be playable: list a whole hand, or use `game_at`, where
    a test depends on what a seat cannot play.
    """
    k = tiles_per_hand(len(hands))
    given, bone = [tiles(h) for h in hands], tiles(boneyard)
    used = {t for h in given for t in h} | set(bone)
    if len(used) != sum(map(len, given)) + len(bone) or any(len(h) > k for h in given):
        raise ValueError("a tile is dealt twice, or a seat is given too many")
    plain = [t for t in TILES if t not in used and not t.is_double and not t.wild_halves]
    special = [t for t in TILES if t not in used and (t.is_double or t.wild_halves)]
    out: list[Tile] = []
    for h in given:
        out += h + [(plain or special).pop(0) for _ in range(k - len(h))]
    return out + bone + plain + special


def shuffled(seed: int) -> list[Tile]:
    """Return a uniformly shuffled deck (the randomness the service passes in, R5)."""
    return random.Random(seed).sample(TILES, len(TILES))


def shuffles(base: int) -> Shuffle:
    """Return a Shuffle that deals hand n the deck `shuffled(base + n)`, with no salt."""
    return lambda number: Shuffled(shuffled(base + number))


def dealt(hands: Sequence[str], boneyard: str = "", *, number: int = 1, rule: str = "draw",
          shuffler: int = 0) -> Hand:
    """Return the hand `Hand.deal` makes of `deck(hands, boneyard)`."""
    return Hand.deal(number, rule, deck(hands, boneyard), shuffler, len(hands))


Decks = Callable[[int], Sequence[Tile]]
"""Gives the deck of a hand number; `_shuffle` adds its salt."""


@dataclass
class Match:
    """A real game state, its events so far and the shuffle that deals later hands."""

    state: GameState
    events: list[ev.Event]
    shuffle: Shuffle
    new: list[ev.Event] = field(default_factory=list)

    @property
    def hand(self) -> Hand:
        """The hand in play."""
        assert self.state.hand is not None
        return self.state.hand

    def play(self, seat: int, *moves: str) -> list[ev.Event]:
        """Make each move for `seat` through `make_move`; return the events of the last."""
        for text in moves:
            self.new = make_move(self.state, seat, Move.parse(text), self.shuffle, AT)
            self.events += self.new
        return self.new

    def legal(self, seat: int) -> list[str]:
        """The seat's legal moves in text form."""
        return legal(self.hand, seat)

    def types(self) -> list[str]:
        """The types of the events the last move recorded."""
        return [e["type"] for e in self.new]


def refused(match: Match, seat: int, text: str) -> IllegalMove:
    """Return the IllegalMove that `text` raises, checking that nothing was recorded."""
    version = match.state.version
    with pytest.raises(IllegalMove) as caught:
        match.play(seat, text)
    assert match.state.version == version
    return caught.value


def players(n: int) -> list[dict[str, Any]]:
    """Return n human players named P0, P1, ..."""
    return [{"name": f"P{s}", "kind": "human"} for s in range(n)]


def _shuffle(first: Sequence[Tile], later: Decks | None) -> Shuffle:
    def shuffle(number: int) -> Shuffled:
        deck = first if number == 1 else later(number) if later else shuffled(number)
        return Shuffled(deck, f"{number:064x}")  # a salt as the service's (API.md)
    return shuffle


def start(hands: Sequence[str], boneyard: str = "", *, rules: dict[str, Any] | None = None,
          later: Decks | None = None) -> Match:
    """Create a real game whose first hand deals `deck(hands, boneyard)`."""
    shuffle = _shuffle(deck(hands, boneyard), later)
    state, events = create_game(players(len(hands)), dict(rules or RULES), shuffle, AT)
    return Match(state, list(events), shuffle, list(events))


def start_from(first: Sequence[Tile], seats: int, *, rules: dict[str, Any] | None = None,
               later: Decks | None = None) -> Match:
    """Create a real game whose first hand deals the deck `first`."""
    shuffle = _shuffle(first, later)
    state, events = create_game(players(seats), dict(rules or RULES), shuffle, AT)
    return Match(state, list(events), shuffle, list(events))


def game_with(hand: Hand, *, hands: int = 10, totals: Sequence[int] | None = None,
              later: Decks | None = None) -> Match:
    """Put `hand` inside a real `GameState` (created by a real `game_created` event)."""
    created = ev.seal({"type": ev.GAME_CREATED, "seat": None,
                       "data": {"players": players(hand.seats),
                                "rules": {"hands": hands, "opening": hand.rule}}},
                      1, AT, ev.GENESIS)
    state = replay([created])
    state.hand = hand
    if totals is not None:
        state.totals = list(totals)
    return Match(state, [created], _shuffle(shuffled(0), later))


def game_at(text: str, **kwargs: Any) -> Match:
    """Put the position written `text` inside a real `GameState`."""
    return game_with(parse_position(text), **kwargs)


def play_randomly(match: Match, rng: random.Random, limit: int = 100_000,
                  each: Callable[[Match], None] | None = None) -> int:
    """Play random legal moves until the match ends (or `limit` moves); return the count."""
    count = 0
    while match.state.status == "playing" and count < limit:
        seat = match.state.turn
        assert seat is not None
        match.play(seat, str(rng.choice(legal_moves(match.hand, seat))))
        count += 1
        if each:
            each(match)
    return count
