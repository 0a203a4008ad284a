"""Spinner Dominoes (RULES.md) as a registered variant: its rules are `service.rules`, its
commands, state and fold `service.game.commands` and `service.game.state`."""

from __future__ import annotations

from typing import Final

from service.game import commands, state
from service.game.variant import Option, Variant
from service.rules.opening import OPENING_RULES
from service.rules.tiles import TILES
from service.rules.turns import legal_moves

VARIANT: Final = Variant(
    name=state.SPINNER,
    options=(Option("hands", 10, "R7", "a match has 1 to 10 hands", low=1, high=10),
             Option("opening", "draw", "R9", f"the opening is {' or '.join(OPENING_RULES)}",
                    choices=OPENING_RULES)),
    seats=range(2, 9), seats_rule="R4", a_game="a game",
    tiles=TILES, create_game=commands.create_game, make_move=commands.make_move,
    legal_moves=legal_moves, evolve=state.evolve, replay=state.replay,
    from_dict=state.GameState.from_dict, leader_draw=None,
    ai="workers.ai.strategies:play_in_game",
)
