"""rq job functions: they take ids and versions, never objects, and reload everything."""

from __future__ import annotations

import random
from functools import cache

from service.adapters.bootstrap import Services, build
from service.adapters.settings import Settings
from service.game.events import Event
from service.game.state import GameState
from service.rules.moves import Move
from workers.ai import choose_move
from workers.ai.seat_view import seat_view


@cache
def services() -> Services:
    """Return this worker process's services, built once from the environment."""
    return build(Settings.from_env())


def take_ai_turn(game_id: str, version: int) -> bool:
    """Play the AI turn due at `version`; a stale job (the game moved on) does nothing."""
    budget = services().settings.ai_budget_s
    rng = random.Random(f"{game_id}:{version}")

    def choose(state: GameState, seat: int, hand_log: list[Event]) -> Move:
        level = state.players[seat].get("level", "expert")
        return choose_move(level, seat_view(state, seat, hand_log), rng, budget)

    return services().games.ai_turn(game_id, version, choose)
