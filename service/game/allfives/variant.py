"""All Fives (ALLFIVES.md) as a registered variant: everything the service asks of it."""

from __future__ import annotations

from typing import Final

from service.game.allfives import commands, state
from service.game.allfives.scoring import DEFAULT_TARGET, TARGETS
from service.game.allfives.tiles import FIVES_SET
from service.game.allfives.turns import legal_moves
from service.game.variant import Option, Variant

VARIANT: Final = Variant(
    name="all_fives",
    options=(Option("target", DEFAULT_TARGET, "F15",
                    f"the target is a multiple of {TARGETS.step} from {TARGETS.start} to "
                    f"{TARGETS[-1]}", low=TARGETS.start, high=TARGETS[-1], step=TARGETS.step),),
    seats=range(2, 5), seats_rule="F2", a_game="an All Fives game",
    tiles=FIVES_SET, create_game=commands.create_game, make_move=commands.make_move,
    legal_moves=legal_moves, evolve=state.evolve, replay=state.replay,
    from_dict=state.FivesState.from_dict, leader_draw=state.LEADER_DRAWN,
    ai="workers.ai.allfives.strategies:play_in_game",
)
