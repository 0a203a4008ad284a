"""After an append only success: an AI turn whose enqueue fails after the move (or the
creation) landed is answered 200 (201), logged and counted, and the next read queues the turn
again, which a real worker then plays."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient
from prometheus_client import REGISTRY

from service.adapters.bootstrap import Services, build
from service.adapters.settings import Settings
from service.api.app import create_app
from tests.api.driver import auth, create
from tests.workers import WorkerProcess, wait_until

FAULTS = [redis.ConnectionError("Connection reset by peer"),
          redis.exceptions.BusyLoadingError("Redis is loading the dataset in memory")]
AIS = {0: "greedy", 1: "greedy"}
NOT_QUEUED = "spinner_ai_turns_not_queued_total"


@pytest.fixture
def services(redis_url: str, redis_client: Any) -> Services:
    """The real services over a flushed Redis, AI turns quick."""
    return build(Settings(redis_url=redis_url, ai_budget_s=0.05, ai_games_per_client=50))


@pytest.fixture
def client(services: Services) -> FlaskClient:
    """A test client of the real app."""
    return create_app({"TESTING": True}, services=services).test_client()


@pytest.fixture
def worker(redis_url: str, redis_client: Any) -> Iterator[WorkerProcess]:
    """One real worker, started after the flush."""
    process = WorkerProcess(redis_url, ai_budget_s="0.05")
    yield process
    process.stop()


def fail_next_enqueue(services: Services, monkeypatch: pytest.MonkeyPatch,
                      error: Exception) -> list[tuple[Any, ...]]:
    """Make the queue's next rq enqueue raise `error` (its Redis failing just then); return
    the list of the enqueues it failed."""
    failed: list[tuple[Any, ...]] = []
    enqueue = services.queue.queue.enqueue_call

    def once(*args: Any, **kwargs: Any) -> Any:
        if failed:
            return enqueue(*args, **kwargs)
        failed.append(kwargs["args"])
        raise error
    monkeypatch.setattr(services.queue.queue, "enqueue_call", once)
    return failed


def version_of(client: FlaskClient, game_id: str) -> int:
    """The game's version, read as any client would (a read heals a lost AI turn)."""
    version: int = client.get(f"/v1/games/{game_id}").json["version"]
    return version


@pytest.mark.parametrize("error", FAULTS, ids=lambda e: type(e).__name__)
def test_a_move_whose_ai_turn_cannot_be_queued_answers_200_and_a_read_heals_it(
        services: Services, client: FlaskClient, worker: WorkerProcess,
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        error: Exception) -> None:
    game_id, tokens = human_to_move_against_ai(client)
    failed = fail_next_enqueue(services, monkeypatch, error)
    counted = REGISTRY.get_sample_value(NOT_QUEUED) or 0.0
    with caplog.at_level(logging.WARNING, logger="spinner"):
        while not failed:  # a draw keeps the turn: move until the AI seat is to move
            mine = client.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).json
            answer = client.post(f"/v1/games/{game_id}/moves", json=mine["legal_moves"][0],
                                 headers=auth(tokens[0]))
            assert answer.status_code == 200, answer.json
    moved = answer.json["version"]
    assert failed == [(game_id, moved)]  # the AI seat's turn, due at the new version
    assert any(f"{game_id} at {moved} was not queued" in r.getMessage() for r in caplog.records)
    assert REGISTRY.get_sample_value(NOT_QUEUED) == counted + 1
    assert wait_until(lambda: version_of(client, game_id) > moved, 20)  # healed, played


@pytest.mark.parametrize("error", FAULTS, ids=lambda e: type(e).__name__)
def test_a_creation_whose_ai_turn_cannot_be_queued_answers_201_and_a_read_heals_it(
        services: Services, client: FlaskClient, worker: WorkerProcess,
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        error: Exception) -> None:
    failed = fail_next_enqueue(services, monkeypatch, error)
    with caplog.at_level(logging.WARNING, logger="spinner"):
        game_id, _ = create(client, seats=2, hands=1, seed=31, ai=AIS)  # asserts the 201
    [(failed_game, opened)] = failed
    assert failed_game == game_id
    assert any(f"{game_id} at {opened} was not queued" in r.getMessage() for r in caplog.records)
    assert wait_until(lambda: version_of(client, game_id) > opened, 20)


def human_to_move_against_ai(client: FlaskClient) -> tuple[str, dict[int, str]]:
    """A game of a human seat (0) and an AI seat (1) whose human is to move."""
    for seed in range(50):
        game_id, tokens = create(client, seats=2, hands=1, seed=seed, ai={1: "greedy"})
        if wait_until(lambda g=game_id: client.get(f"/v1/games/{g}").json["turn"] == 0, 20):
            return game_id, tokens
    raise AssertionError("the human seat never got to move")
