"""No timing channel in AI moves (issue 17): on a real worker, an AI's move reaches the log no
sooner than a fixed delay after its turn began (the budget for `expert`, AI_MIN_DELAY_S for
the others), so a forced move and a searched one cannot be told apart by their times."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from service.adapters.bootstrap import Services, build
from service.adapters.settings import Settings
from service.api.app import create_app
from service.game import events as ev
from service.game.state import evolve, replay
from service.usecases.ai_turns import ai_to_move
from tests.api.driver import create
from tests.workers import WorkerProcess, wait_until
from workers.ai.expert import candidates
from workers.ai.seat_view import seat_view

BUDGET_MS = 200
MIN_DELAY_MS = 50
MS = timedelta(milliseconds=1)


@pytest.fixture
def services(redis_url: str, redis_client) -> Services:
    """The services of the app that creates the games."""
    return build(Settings(redis_url=redis_url, ai_budget_s=BUDGET_MS / 1000))


@pytest.fixture
def worker(redis_url: str, redis_client) -> Iterator[WorkerProcess]:
    """One real worker with a short expert budget and the non-expert delay."""
    process = WorkerProcess(redis_url, ai_budget_s=str(BUDGET_MS / 1000),
                            ai_min_delay_s=str(MIN_DELAY_MS / 1000))
    yield process
    process.stop()


def finished_log(services: Services, levels: dict[int, str]) -> list[ev.Event]:
    """Create a one-hand game of AI seats, wait for it to end and return its whole log."""
    client = create_app({"TESTING": True}, services=services).test_client()
    game_id, _ = create(client, seats=len(levels), hands=1, seed=None, ai=levels)
    assert wait_until(
        lambda: client.get(f"/v1/games/{game_id}").json["status"] == "finished", 120)
    return services.store.read(game_id)


def ai_turns(log: list[ev.Event]) -> Iterator[tuple[int, int]]:
    """Yield, for each AI move in `log`, how many candidates the expert had and the ms from
    the event that began its turn to the move's first event: the first with a seat, but for
    the server's R9 search draws, which come with the deal."""
    state = replay(log[:1])
    for before, event in zip(log, log[1:], strict=False):
        move = event["seat"] is not None and event["data"].get("reason") != "search"
        if move and ai_to_move(state):
            view = seat_view(state, event["seat"], log[state.hand_seq - 1:state.version])
            gap = datetime.fromisoformat(event["at"]) - datetime.fromisoformat(before["at"])
            yield len(candidates(view)), gap // MS
        state = evolve(state, event)


def test_expert_moves_forced_or_searched_come_a_budget_after_the_turn_began(services, worker):
    forced: list[int] = []
    searched: list[int] = []
    for _ in range(5):  # deals are random: play until both kinds of position came up
        for count, gap in ai_turns(finished_log(services, {0: "expert", 1: "expert"})):
            (forced if count == 1 else searched).append(gap)
        if len(forced) >= 3 and len(searched) >= 3:
            break
    assert len(forced) >= 3 and len(searched) >= 3
    assert min(forced + searched) >= BUDGET_MS
    assert max(forced) >= min(searched)  # not separable: the two kinds' gaps overlap


def test_greedy_and_random_moves_come_no_sooner_than_the_constant(services, worker):
    gaps = [gap for _, gap in ai_turns(finished_log(services, {0: "greedy", 1: "random"}))]
    assert len(gaps) > 5
    assert min(gaps) >= MIN_DELAY_MS
