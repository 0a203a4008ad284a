"""Matches between AI players through the real commands: each sees only its own seat's view."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from service.game import events as ev
from service.game.allfives.commands import create_game as create_fives_game
from service.game.allfives.commands import make_move as make_fives_move
from service.game.allfives.state import FivesState
from service.game.commands import Shuffle, create_game, make_move
from service.game.fairness import Shuffled
from service.game.state import GameState
from service.rules.allfives.tiles import FIVES_SET
from service.rules.moves import Move
from service.rules.tiles import TILES, Tile
from tests.support.selfplay import AT
from workers.ai.allfives.view import FivesView, fives_view
from workers.ai.seat_view import SeatView, seat_view


def seeded(seed: object, tiles: Sequence[Tile] = TILES) -> Shuffle:
    """Return a Shuffle whose every hand's deck of `tiles` follows from `seed` and the hand
    number alone, with no salt: the same deals in every simulated match given that seed."""
    def shuffle(number: int) -> Shuffled:
        deck = list(tiles)
        random.Random(f"{seed}:{number}").shuffle(deck)
        return Shuffled(deck)
    return shuffle


Player = Callable[[SeatView, random.Random], Move]
"""An AI player: its move from its seat's view, drawing on the match's `rng`."""


def play_ai_match(players: Sequence[Player], rules: dict[str, Any], seed: object,
                  rng: random.Random) -> tuple[GameState, list[ev.Event]]:
    """Play a match, asking each seat's player for its moves; return the state and the log."""
    shuffle = seeded(seed)
    seats = [{"name": f"AI{s}", "kind": "ai"} for s in range(len(players))]
    state, log = create_game(seats, rules, shuffle, AT)
    while state.status == "playing":
        seat = state.turn
        assert seat is not None
        move = players[seat](seat_view(state, seat, _hand_log(log)), rng)
        log += make_move(state, seat, move, shuffle, AT)
    return state, log


def _hand_log(log: list[ev.Event]) -> list[ev.Event]:
    """The events of the hand in play (from its `hand_started`)."""
    for i in range(len(log) - 1, -1, -1):
        if log[i]["type"] == ev.HAND_STARTED:
            return log[i:]
    return log


FivesPlayer = Callable[[FivesView, random.Random], Move]
"""An All Fives AI player: its move from its seat's view, drawing on the match's `rng`."""


def play_fives_ai_match(players: Sequence[FivesPlayer], target: int, seed: object,
                        rng: random.Random) -> tuple[FivesState, list[ev.Event]]:
    """Play an All Fives match to `target` (F15), each seat's player seeing its own view."""
    shuffle = seeded(seed, FIVES_SET)
    seats = [{"name": f"AI{s}", "kind": "ai"} for s in range(len(players))]
    state, log = create_fives_game(seats, {"variant": "all_fives", "target": target},
                                   shuffle, AT)
    while state.status == "playing":
        seat = state.turn
        assert seat is not None
        move = players[seat](fives_view(state, seat, _hand_log(log)), rng)
        log += make_fives_move(state, seat, move, shuffle, AT)
    return state, log
