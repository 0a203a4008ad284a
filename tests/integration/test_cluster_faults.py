"""A Redis Cluster that fails while a master is down: /healthz says so (503) and every request
that touches a game answers 503 problem+json with Retry-After, never 500; once the master is
back, /healthz answers 200 again and play resumes.

The cluster is three real masters (AOF on, so the restarted one keeps its games) with a short
cluster-node-timeout, so that the others mark it failed, and then the cluster fail, within
seconds; the queue has a plain redis-server of its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient
from redis.crc import key_slot

from service.adapters.bootstrap import Services, build
from service.adapters.redis_store import game_key
from service.adapters.settings import Settings
from service.api.app import create_app
from service.entrypoints.redis_server import RedisServer
from tests.api.contract import ContractClient
from tests.api.driver import auth, create
from tests.local_cluster import LocalCluster, slot_ranges

NODE_TIMEOUT_MS = 1000
VICTIM, SURVIVOR = 1, 0
FAIL_WITHIN_S = 20.0
RECOVER_WITHIN_S = 30.0
BODY = {"players": [{"name": "P0", "kind": "human"}, {"name": "P1", "kind": "human"}],
        "rules": {"hands": 1, "opening": "draw"}}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """Three masters that notice a dead one within about a second."""
    with LocalCluster(tmp_path_factory.mktemp("failing-cluster"), appendonly=True,
                      node_timeout_ms=NODE_TIMEOUT_MS) as running:
        yield running


@pytest.fixture(scope="module")
def services(cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[Services]:
    """The real services, the store on the cluster, the queue on a plain Redis."""
    with RedisServer(tmp_path_factory.mktemp("queue"), appendonly=False) as queue:
        built = build(Settings(redis_url=cluster.url, queue_redis_url=queue.url,
                               rate_limit_per_address=0, rate_limit_per_token=0))  # their
        # counters live on some master: here each request reaches a game's master first
        yield built
        built.store.client.close()
        built.queue.connection.close()


@pytest.fixture(scope="module")
def client(services: Services) -> ContractClient:
    """A test client whose every answer must fit openapi.yaml."""
    return ContractClient(create_app({"TESTING": True}, services=services).test_client())


def master_of(game_id: str) -> int:
    """The index of the master LocalCluster gave the game's slot to."""
    slot = key_slot(game_key(game_id, "events").encode())
    return next(i for i, slots in enumerate(slot_ranges(3)) if slot in slots)


def game_on(client: FlaskClient, master: int) -> tuple[str, dict[int, str]]:
    """Create human games until one lives on `master`; return it."""
    for seed in range(200):
        game_id, tokens = create(client, seats=2, hands=1, seed=seed)
        if master_of(game_id) == master:
            return game_id, tokens
    raise AssertionError(f"no game landed on master {master}")


def next_move(client: FlaskClient, game_id: str, tokens: dict[int, str]
              ) -> Callable[[], Any]:
    """Return a call that posts the first legal move of the seat to move now."""
    token = tokens[client.get(f"/v1/games/{game_id}").json["turn"]]
    legal = client.get(f"/v1/games/{game_id}", headers=auth(token)).json["legal_moves"][0]
    return lambda: client.post(f"/v1/games/{game_id}/moves", json=legal, headers=auth(token))


def cluster_state(cluster: LocalCluster, index: int) -> str:
    """The cluster_state a master reports (`ok` or `fail`)."""
    with cluster.node_client(index) as node:
        info = node.execute_command("CLUSTER", "INFO").decode()
    return dict(line.split(":", 1) for line in info.split() if ":" in line)["cluster_state"]


def poll(check: Callable[[], bool], within_s: float, what: str) -> None:
    """Call `check` until it holds; fail naming `what` after `within_s` seconds."""
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, f"not within {within_s} s: {what}"
        time.sleep(0.1)


def test_a_failing_cluster_answers_503_never_500_and_play_resumes_after(
        client: ContractClient, cluster: LocalCluster) -> None:
    survivor, victim = game_on(client, SURVIVOR), game_on(client, VICTIM)
    move_survivor = next_move(client, *survivor)
    assert client.get("/healthz").status_code == 200
    statuses: list[int] = []

    def status(answer: Any) -> int:
        statuses.append(answer.status_code)
        return int(answer.status_code)

    cluster.servers[VICTIM].stop()
    try:
        assert status(client.get("/healthz")) == 503  # its master does not answer the probe
        assert status(client.get(f"/v1/games/{victim[0]}")) == 503
        poll(lambda: cluster_state(cluster, SURVIVOR) == "fail", FAIL_WITHIN_S,
             "the cluster fails")
        unavailable = [client.get("/healthz"), client.get(f"/v1/games/{survivor[0]}"),
                       move_survivor(), client.post("/v1/games", json=BODY)]
        assert [status(answer) for answer in unavailable] == [503] * 4
        assert all(a.headers["Retry-After"] == "1" for a in unavailable)
    finally:
        cluster.servers[VICTIM].start()
    poll(lambda: status(client.get("/healthz")) == 200, RECOVER_WITHIN_S, "healthz is 200")
    assert status(move_survivor()) == 200  # the move refused while the cluster failed
    assert status(next_move(client, *victim)()) == 200
    assert set(statuses) <= {200, 503}, statuses
