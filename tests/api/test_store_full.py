"""A full store (Redis at its maxmemory, noeviction) is a clear answer: creations and moves get
503 naming the cause, reads still answer, /healthz says the store is full; once Redis has room
again, writes land again."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import redis

from service.adapters.bootstrap import build
from service.adapters.settings import Settings
from service.api.app import create_app
from tests.api.contract import ContractClient
from tests.api.driver import auth, create

BODY = {"players": [{"name": "P0", "kind": "human"}, {"name": "P1", "kind": "human"}],
        "rules": {"hands": 1, "opening": "draw"}}
ROOM = 2 * 1024 * 1024
"""The bytes of room Redis is given above what it holds, then filled."""


@pytest.fixture
def limited(redis_url: str, redis_client: redis.Redis) -> ContractClient:
    """A client of the app as production builds it, rate limits on (they count in Redis)."""
    services = build(Settings(redis_url=redis_url, rate_limit_per_address=1000,
                              rate_limit_per_token=1000))
    return ContractClient(create_app({"TESTING": True}, services=services).test_client())


def fill(client: redis.Redis) -> None:
    """Give Redis a small maxmemory and write to it until it refuses (OOM); then take a
    little off the maxmemory, so that buffers freed meanwhile leave it full."""
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", client.info("memory")["used_memory"] + ROOM)
    for n in itertools.count():
        try:
            client.set(f"filler:{n}", b"x" * 65536)
        except redis.exceptions.OutOfMemoryError:
            break
    client.config_set("maxmemory", client.info("memory")["used_memory"] - ROOM // 8)


def assert_full(answer: Any) -> None:
    """The answer is the documented 503 naming a full store as its cause."""
    assert answer.status_code == 503, answer.json
    assert answer.headers["Retry-After"] == "1"
    assert answer.json["type"] == "/problems/store-unavailable"
    assert "full" in answer.json["detail"]


def test_a_full_store_refuses_writes_by_name_still_answers_reads_and_recovers(
        limited: ContractClient, redis_client: redis.Redis) -> None:
    game_id, tokens = create(limited, seats=2, seed=3)
    seat = limited.get(f"/v1/games/{game_id}").json["turn"]
    move = limited.get(f"/v1/games/{game_id}", headers=auth(tokens[seat])).json["legal_moves"][0]
    fill(redis_client)
    try:
        assert_full(limited.post("/v1/games", json=BODY))
        assert_full(limited.post(f"/v1/games/{game_id}/moves", json=move,
                                 headers=auth(tokens[seat])))
        assert limited.get(f"/v1/games/{game_id}").status_code == 200
        assert limited.get(f"/v1/games/{game_id}", headers=auth(tokens[seat])).status_code == 200
        assert limited.get(f"/v1/games/{game_id}/events").status_code == 200
        assert limited.get(f"/v1/games/{game_id}/state?version=1").status_code == 200
        health = limited.get("/healthz")
        assert_full(health)
        assert "store" in health.json["detail"]
    finally:
        redis_client.config_set("maxmemory", "0")
    assert limited.get("/healthz").status_code == 200
    assert limited.post("/v1/games", json=BODY).status_code == 201
    moved = limited.post(f"/v1/games/{game_id}/moves", json=move, headers=auth(tokens[seat]))
    assert moved.status_code == 200, moved.json
