"""The AI of a game's variant: the entry point its registry record names (`Variant.ai`,
`module:function`), imported here because the game layer may not import the workers."""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from service.game import events as ev
from service.game.state import Match
from service.game.variants import DEFAULT, VARIANTS
from service.rules.moves import Move

Player = Callable[[str, Match[Any], int, Sequence[ev.Event], random.Random, float], Move]


@cache
def player_of(variant: str) -> Player:
    """Return the AI entry point of the variant named `variant`, imported once."""
    module, _, name = VARIANTS[variant].ai.partition(":")
    player: Player = getattr(importlib.import_module(module), name)
    return player


def choose_in_game(level: str, state: Match[Any], seat: int, log: Sequence[ev.Event],
                   rng: random.Random, budget_s: float) -> Move:
    """Return the move the AI of `level` makes for `seat` in a game of any variant, from
    that seat's view only (R25); `log` (the hand's events) gives the public history."""
    return player_of(state.rules.get("variant", DEFAULT))(level, state, seat, log, rng,
                                                          budget_s)
