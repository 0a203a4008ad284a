"""Matches between AI players through the real commands: each sees only its own seat's view."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from service.game import events as ev
from service.game.commands import Shuffle
from service.game.fairness import Shuffled
from service.game.variants import variant_of
from service.rules.moves import Move
from service.rules.tiles import TILES, Tile
from tests.support.selfplay import AT
from workers.ai.seat_view import seat_view


def seeded(seed: object, tiles: Sequence[Tile] = TILES) -> Shuffle:
    """Return a Shuffle whose every hand's deck of `tiles` follows from `seed` and the hand
    number alone, with no salt: the same deals in every simulated match given that seed."""
    def shuffle(number: int) -> Shuffled:
        deck = list(tiles)
        random.Random(f"{seed}:{number}").shuffle(deck)
        return Shuffled(deck)
    return shuffle


Player = Callable[[Any, random.Random], Move]
"""An AI player: its move from its seat's view (the variant's: Spinner's `SeatView`, All
Fives' `FivesView`), drawing on the match's `rng`."""

Viewer = Callable[[Any, int, list[ev.Event]], Any]
"""Builds one seat's view from the state and the hand's events: `seat_view`, `fives_view`."""


def play_ai_match(players: Sequence[Player], rules: dict[str, Any], seed: object,
                  rng: random.Random, view: Viewer = seat_view) -> tuple[Any, list[ev.Event]]:
    """Play a match of the variant `rules` name, asking each seat's player for its moves
    from its own `view`; return the state and the log."""
    variant = variant_of(rules)
    shuffle = seeded(seed, variant.tiles)
    seats = [{"name": f"AI{s}", "kind": "ai"} for s in range(len(players))]
    state, log = variant.create_game(seats, rules, shuffle, AT)
    while state.status == "playing":
        seat = state.turn
        assert seat is not None
        move = players[seat](view(state, seat, _hand_log(log)), rng)
        log += variant.make_move(state, seat, move, shuffle, AT)
    return state, log


def _hand_log(log: list[ev.Event]) -> list[ev.Event]:
    """The events of the hand in play (from its `hand_started`)."""
    for i in range(len(log) - 1, -1, -1):
        if log[i]["type"] == ev.HAND_STARTED:
            return log[i:]
    return log

