"""rq job functions: they take ids and versions, never objects, and reload everything."""

from __future__ import annotations

import random
from functools import cache
from typing import Any

from service.adapters.bootstrap import Services, build
from service.adapters.settings import Settings
from service.game.events import Event
from service.game.lifecycle import TIMEOUT_LEVEL
from service.game.state import Match
from service.rules.moves import Move
from service.usecases.ai_turns import EXPERT
from workers.ai.by_variant import choose_in_game

SEARCH_SHARE = 0.9
"""The share of the time left before its move may be appended that the expert searches; the
rest absorbs its last deal's overrun, so a search ends no later than a forced move's wait."""


@cache
def services() -> Services:
    """Return this worker process's services, built once from the environment."""
    return build(Settings.from_env())


def level(state: Match[Any], seat: int) -> str:
    """Return the AI level of `seat`."""
    return str(state.players[seat].get("level", "expert"))


def pace(state: Match[Any], seat: int) -> float:
    """Return how long after its turn began the AI's move may be appended: the budget for
    `expert`, the small constant for the others, whatever the position (no timing channel)."""
    settings = services().settings
    return settings.ai_budget_s if level(state, seat) == "expert" else settings.ai_min_delay_s


def search_budget(left_s: float, waiting: int, calm: int) -> float:
    """Return how long an expert searches: SEARCH_SHARE of the time left before its move may
    be appended, and with more than `calm` expert turns waiting in the queue, only the share
    calm/waiting of that, so that a long queue costs the machine less CPU (its fast-lane
    worker and API processes keep theirs). The move still reaches the log at its fixed time."""
    share = SEARCH_SHARE if waiting <= calm else SEARCH_SHARE * calm / waiting
    return left_s * share


def take_ai_turn(game_id: str, version: int) -> bool:
    """Play the AI turn due at `version`; a stale job (the game moved on) does nothing."""
    rng = random.Random(f"{game_id}:{version}")

    def choose(state: Match[Any], seat: int, hand_log: list[Event], left_s: float) -> Move:
        kind = level(state, seat)
        waiting = services().queue.waiting(EXPERT) if kind == EXPERT else 0
        budget_s = search_budget(left_s, waiting, services().settings.ai_expert_calm_queue)
        return choose_in_game(kind, state, seat, hand_log, rng, budget_s)

    played = services().games.ai_turn(game_id, version, choose, pace)
    services().queue.turn_done(game_id, version)
    return played


def drain_notifications() -> int:
    """Make the first try of the notifications waiting in the outbox; return how many."""
    return services().notifier.drain()


def run_out_clock(game_id: str, version: int) -> bool:
    """Time out the human seat to move at `version`, moving for it as the `random` AI does
    (API.md "Turn clocks"); a stale clock (the game moved on) does nothing."""
    rng = random.Random(f"{game_id}:{version}:clock")

    def choose(state: Match[Any], seat: int, hand_log: list[Event], left_s: float) -> Move:
        return choose_in_game(TIMEOUT_LEVEL, state, seat, hand_log, rng, left_s)

    return services().games.run_out_clock(game_id, version, choose)
