"""A Redis that cannot serve now answers 503 problem+json with Retry-After, never 500, on
every path of a request (the store, the rate counter), and /healthz tells the truth: 503
while the store cannot take writes or the queue's Redis is down, naming which."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from redis import exceptions as rx

from service.adapters.bootstrap import STORE_TIMEOUT_S, Services, build
from service.adapters.redis_store import RedisEventStore
from service.adapters.settings import Settings
from service.api.app import create_app
from service.entrypoints.redis_server import RedisServer, free_port
from tests.api.contract import ContractClient
from tests.api.driver import auth, create

NOT_NOW_ERRORS = [
    rx.ClusterDownError("CLUSTERDOWN The cluster is down"),
    rx.MasterDownError("MASTERDOWN Link with MASTER is down"),
    rx.ClusterError("TTL exhausted."),
    rx.TryAgainError("TRYAGAIN Multiple keys request during rehashing of slot"),
    rx.SlotNotCoveredError('Slot "42" is not covered by the cluster.'),
    rx.BusyLoadingError("Redis is loading the dataset in memory"),
    rx.ReadOnlyError("You can't write against a read only replica."),
    rx.OutOfMemoryError("command not allowed when used memory > 'maxmemory'."),
    rx.ConnectionError("Connection reset by peer"),
    rx.TimeoutError("Timeout reading from socket"),
]
BODY = {"players": [{"name": "P0", "kind": "human"}, {"name": "P1", "kind": "human"}],
        "rules": {"hands": 1, "opening": "draw"}}


class Failing:
    """A Redis client whose every command raises `error`, as a failing cluster's client does
    (as a cluster client, it lends the store no connection of its own)."""

    connection = None

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any, **kwargs: Any) -> Any:
            raise self.error
        return fail


def assert_unavailable(answer: Any) -> None:
    """The answer is the documented 503 (ContractClient checks it against openapi.yaml)."""
    assert answer.status_code == 503, answer.json
    assert answer.headers["Retry-After"] == "1"
    assert answer.json["type"] == "/problems/store-unavailable"


@pytest.fixture
def game(client: ContractClient) -> tuple[str, str, dict[str, Any]]:
    """A 2-seat human game made while Redis is well: its id, the token of the seat to move
    and a legal move of that seat."""
    game_id, tokens = create(client, seats=2, seed=3)
    token = tokens[client.get(f"/v1/games/{game_id}").json["turn"]]
    mine = client.get(f"/v1/games/{game_id}", headers=auth(token)).json
    return game_id, token, mine["legal_moves"][0]


@pytest.mark.parametrize("error", NOT_NOW_ERRORS, ids=lambda e: type(e).__name__)
def test_a_store_error_that_means_not_now_answers_503_on_a_get_and_a_post(
        client: ContractClient, services: Services, game: tuple[str, str, dict[str, Any]],
        error: Exception) -> None:
    game_id, token, move = game
    services.store.client = Failing(error)
    assert_unavailable(client.get(f"/v1/games/{game_id}"))
    assert_unavailable(client.get(f"/v1/games/{'0' * 16}"))  # an unknown game: its meta
    assert_unavailable(client.post("/v1/games", json=BODY))
    assert_unavailable(client.post(f"/v1/games/{game_id}/moves", json=move, headers=auth(token)))


def test_a_redis_error_from_a_bug_is_no_503(client: ContractClient, services: Services) -> None:
    services.store.client = Failing(rx.ResponseError("ERR Error running script: a bug"))
    answer = client.post("/v1/games", json=BODY)
    assert answer.status_code == 500
    assert answer.json["type"] == "/problems/internal"


@pytest.mark.parametrize("error", NOT_NOW_ERRORS[:3], ids=lambda e: type(e).__name__)
def test_a_rate_counter_that_cannot_count_now_answers_503(
        redis_url: str, redis_client: Any, monkeypatch: pytest.MonkeyPatch,
        error: Exception) -> None:
    services = build(Settings(redis_url=redis_url, rate_limit_per_address=100))
    counting = RedisEventStore(Failing(error))  # the counter's Redis fails, the store's not
    monkeypatch.setattr(services.rate_counter, "_store", counting)
    client = ContractClient(create_app({"TESTING": True}, services=services).test_client())
    assert_unavailable(client.post("/v1/games", json=BODY))
    assert_unavailable(client.get(f"/v1/games/{'0' * 16}"))


def test_healthz_is_200_while_the_store_takes_writes_and_the_queue_answers(
        client: ContractClient) -> None:
    answer = client.get("/healthz")
    assert answer.status_code == 200
    assert answer.json == {"status": "ok", "store": "reachable"}


def test_healthz_is_503_naming_the_queue_while_the_queues_redis_is_down(redis_url: str) -> None:
    closed = f"redis://127.0.0.1:{free_port()}/0"
    services = build(Settings(redis_url=redis_url, queue_redis_url=closed))
    answer = ContractClient(create_app({"TESTING": True}, services=services).test_client()
                            ).get("/healthz")
    assert_unavailable(answer)
    assert "queue" in answer.json["detail"]


@pytest.mark.parametrize("part", ["store", "queue"])
def test_healthz_is_503_while_redis_is_loading(client: ContractClient, services: Services,
                                               monkeypatch: pytest.MonkeyPatch,
                                               part: str) -> None:
    loading = rx.BusyLoadingError("Redis is loading the dataset in memory")
    if part == "store":
        services.store.client = Failing(loading)
    else:
        monkeypatch.setattr(services.queue.connection, "ping", Failing(loading).ping)
    answer = client.get("/healthz")
    assert_unavailable(answer)
    assert part in answer.json["detail"]


@pytest.fixture
def full(redis_client: redis.Redis) -> Iterator[None]:
    """The test Redis over its maxmemory, refusing writes (OOM) though it answers PING."""
    redis_client.config_set("maxmemory-policy", "noeviction")
    redis_client.config_set("maxmemory", "1")
    try:
        yield
    finally:
        redis_client.config_set("maxmemory", "0")


def test_a_redis_out_of_memory_fails_healthz_and_answers_503(
        client: ContractClient, services: Services, game: tuple[str, str, dict[str, Any]],
        full: None) -> None:
    game_id, token, move = game
    assert services.store.client.ping()  # PING alone would call it healthy
    answer = client.get("/healthz")
    assert_unavailable(answer)
    assert "store" in answer.json["detail"]
    assert_unavailable(client.post(f"/v1/games/{game_id}/moves", json=move, headers=auth(token)))
    assert_unavailable(client.post("/v1/games", json=BODY))


def test_a_redis_that_stops_answering_gets_503_after_one_timeout_not_three(tmp_path):
    """A Redis that keeps its connections but answers nothing (SIGSTOP: a hung host, a
    partition) is waited on for STORE_TIMEOUT_S once: a command that timed out may have run,
    and is not sent again (a lost connection is)."""
    with RedisServer(tmp_path / "redis") as server:
        client = ContractClient(create_app({"TESTING": True}, services=build(
            Settings(redis_url=server.url, rate_limit_per_address=0))).test_client())
        game_id, _ = create(client, seats=2)
        os.kill(server.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            answer = client.get(f"/v1/games/{game_id}")
            waited = time.monotonic() - started
        finally:
            os.kill(server.pid, signal.SIGCONT)
        assert_unavailable(answer)
        assert STORE_TIMEOUT_S <= waited < 2 * STORE_TIMEOUT_S  # retried, it would be 3 times
        assert client.get(f"/v1/games/{game_id}").status_code == 200
