"""An AI move's time says nothing of the hand (issue 17): it reaches the log no sooner than
its pace after the turn began, however fast it was chosen, and a late job does not wait."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any

import pytest

from service.adapters.bootstrap import utc_now
from service.adapters.logs import utc_millis
from service.game import events as ev
from service.game.state import GameState
from service.rules.moves import Move
from service.usecases.games import Games
from tests.memory_store import InMemoryEventStore
from tests.unit.test_usecases import AIS, RULES, FakeTurnQueue, first_legal

PACE_S = 0.05
MS = timedelta(milliseconds=1)


@pytest.fixture
def games() -> Games:
    """The use cases over an in-memory store, with the real clock."""
    return Games(InMemoryEventStore(), FakeTurnQueue(), utc_now)


def last_gap(games: Games, game_id: str) -> float:
    """Seconds between the `at`s of the log's last event and the one before it (exact: the
    `at`s are to the millisecond)."""
    *_, before, last = games.ctx.store.read(game_id)
    return (datetime.fromisoformat(last["at"]) - datetime.fromisoformat(before["at"])) // MS / 1000


def test_an_instant_choice_is_appended_no_sooner_than_its_pace_after_the_turn_began(
        games: Games) -> None:
    created = games.create(AIS, RULES, 7)
    left: list[float] = []

    def choose(state: GameState, seat: int, log: list[ev.Event], left_s: float) -> Move:
        left.append(left_s)
        return first_legal(state, seat, log, left_s)

    assert games.ai_turn(created.game_id, created.state.version, choose, lambda *_: PACE_S)
    assert last_gap(games, created.game_id) >= PACE_S
    assert 0 < left[0] <= PACE_S  # the chooser is told how long it may think


def test_a_job_that_runs_late_appends_at_once(games: Games) -> None:
    games.ctx.clock = lambda: utc_millis(time.time() - 10, "Z")  # the turn began 10 s ago
    created = games.create(AIS, RULES, 7)
    games.ctx.clock = utc_now
    started = time.monotonic()
    assert games.ai_turn(created.game_id, created.state.version, first_legal, lambda *_: 1.0)
    assert time.monotonic() - started < 1.0
    assert last_gap(games, created.game_id) >= 10


def test_without_a_pace_the_move_is_appended_at_once(games: Games) -> None:
    created = games.create(AIS, RULES, 7)

    def chosen_instantly(*args: Any) -> Move:
        return first_legal(*args)

    assert games.ai_turn(created.game_id, created.state.version, chosen_instantly)
    assert last_gap(games, created.game_id) < 1.0
