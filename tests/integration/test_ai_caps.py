"""AI work is bounded per client (issue 17), on real rq workers over a real Redis: a game's
end frees its client's slot, deferred AI turns are all played with no more of a client's
turns queued at once than its cap, and expert searches never hold up a fast reply."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from rq import Queue

from service.adapters.bootstrap import Services, build
from service.adapters.settings import Settings
from service.adapters.turn_queue import EXPERT_QUEUE_NAME, QUEUE_NAME
from service.api.app import create_app
from service.usecases.clients import Client
from tests.api.driver import create
from tests.workers import WorkerProcess, wait_until

CAPS = {"ai_games_per_client": 1, "ai_turns_per_client": 1}
QUICK = {"ai_budget_s": 0.05, "ai_min_delay_s": 0.01}
OPEN = {"rate_limit_per_address": 0, "rate_limit_per_token": 0}  # the tests poll often


@pytest.fixture
def services(redis_url: str, redis_client) -> Services:
    """The services of an app with one open AI game and one queued AI turn an address."""
    return build(Settings(redis_url=redis_url, **QUICK, **OPEN, **CAPS))  # type: ignore[arg-type]


@pytest.fixture
def client(services: Services):
    """A test client of that app."""
    return create_app({"TESTING": True}, services=services).test_client()


@pytest.fixture
def start_worker(redis_url: str) -> Iterator:
    """Start real workers (`--fast-only` ones too) with quick AIs and the given caps; stop
    them after."""
    started: list[WorkerProcess] = []

    def start(fast_only: bool = False, **caps: int) -> WorkerProcess:
        worker = WorkerProcess(redis_url, *(["--fast-only"] if fast_only else []),
                               **{k: str(v) for k, v in {**QUICK, **caps}.items()})
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


def finished(client, game_id: str) -> bool:
    """Whether the game's match has ended."""
    return client.get(f"/v1/games/{game_id}").json["status"] == "finished"


def test_the_end_of_a_game_frees_its_slot(client, services, start_worker):
    first, _ = create(client, seats=2, hands=1, seed=None, ai={0: "greedy", 1: "random"})
    refused = client.post("/v1/games", json={"players": [
        {"name": "A", "kind": "ai", "level": "greedy"}, {"name": "B", "kind": "human"}]})
    assert refused.status_code == 429
    start_worker(**CAPS)
    assert wait_until(lambda: finished(client, first), 60)
    ledger = services.games.ctx.caps.ledger  # the worker's last move released it at once
    assert wait_until(lambda: first not in ledger.open_games(Client("addr:127.0.0.1")), 5)
    create(client, seats=2, hands=1, seed=None, ai={0: "greedy"})  # the slot is free again


def test_queued_turns_are_capped_and_every_deferred_turn_is_played(
        redis_url, redis_client, start_worker):
    caps = {"ai_games_per_client": 3, "ai_turns_per_client": 1}
    services = build(Settings(redis_url=redis_url, **QUICK, **OPEN, **caps))  # type: ignore[arg-type]
    client = create_app({"TESTING": True}, services=services).test_client()
    games = [create(client, seats=2, hands=1, seed=None, ai={0: "greedy", 1: "random"})[0]
             for _ in range(3)]
    queue = Queue(QUEUE_NAME, connection=redis_client)
    assert queue.count == 1  # the other two games' turns wait, deferred
    start_worker(**caps)
    deadline, waiting = time.monotonic() + 90, set()
    while not all(ended(services, game_id) for game_id in games):  # all deferred played
        waiting.add(queue.count)  # polled on the store: no read heals a turn meanwhile
        assert time.monotonic() < deadline, "the deferred AI turns were not all played"
        time.sleep(0.01)
    assert waiting <= {0, 1}, "more of the client's AI turns waited queued than its cap"


def ended(services: Services, game_id: str) -> bool:
    """Whether the game's log ends with its match's end (read without healing anything)."""
    version = services.store.version(game_id)
    return services.store.read(game_id, after=version - 1)[-1]["type"] == "game_ended"


def test_a_fast_lane_worker_plays_greedy_turns_while_expert_turns_wait(
        redis_url, redis_client, start_worker):
    services = build(Settings(redis_url=redis_url, **QUICK, **OPEN))  # type: ignore[arg-type]
    client = create_app({"TESTING": True}, services=services).test_client()
    expert, _ = create(client, seats=2, hands=1, seed=3, ai={0: "expert", 1: "expert"})
    version = client.get(f"/v1/games/{expert}").json["version"]
    greedy, _ = create(client, seats=2, hands=1, seed=None, ai={0: "greedy", 1: "random"})
    start_worker(fast_only=True)
    assert wait_until(lambda: finished(client, greedy), 60)
    assert client.get(f"/v1/games/{expert}").json["version"] == version
    assert Queue(EXPERT_QUEUE_NAME, connection=redis_client).count == 1
