"""AI work is bounded per client (issue 17): open games with AI seats and AI turns queued at
once, over the real app and Redis (no worker: nothing here needs a turn played)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from rq import Queue

from service.adapters.bootstrap import Services
from service.adapters.settings import Settings
from service.adapters.turn_queue import QUEUE_NAME
from service.usecases.clients import Client
from tests.api.driver import auth, create

EXPERTS = [{"name": f"E{s}", "kind": "ai", "level": "expert"} for s in range(8)]
FLOOD = {"players": EXPERTS, "rules": {"hands": 10}}
"""The issue's flood: 8 expert seats, 10 hands, created 30 times from one address."""
TEST_CLIENT = Client("addr:127.0.0.1")  # Flask's test client's address


@pytest.fixture
def settings(redis_url: str) -> Settings:
    """The default caps (4 open AI games an address, 500 an API key), but 1 queued AI turn
    an address, so that a second game's turn is deferred."""
    return Settings(redis_url=redis_url, ai_budget_s=0.02, ai_turns_per_client=1,
                    rate_limit_per_token=0, rate_limit_per_address=0)


def test_an_anonymous_flood_is_refused_past_the_cap_and_a_keyed_client_is_not(client, services):
    answers = [client.post("/v1/games", json=FLOOD) for _ in range(30)]
    assert [a.status_code for a in answers] == [201] * 4 + [429] * 26
    refused = answers[-1]
    assert refused.mimetype == "application/problem+json"
    assert refused.json["type"] == "/problems/too-many-ai-games"
    assert "4 open games with AI seats" in refused.json["detail"]
    assert "API key" in refused.json["detail"] and "500" in refused.json["detail"]
    assert refused.headers["Retry-After"] == "60"
    keyed = Client("key:acme", keyed=True)
    for _ in range(30):  # the back end with an API key: its own, larger cap
        services.games.create(EXPERTS, {"hands": 10, "opening": "draw"}, None, keyed)
    assert len(services.games.ctx.caps.ledger.open_games(keyed)) == 30


def test_games_without_ai_seats_do_not_count(client):
    for _ in range(6):
        create(client, seats=2)
    for _ in range(4):
        create(client, seats=2, ai={1: "greedy"})


def test_a_counted_game_that_is_gone_ended_or_idle_frees_its_slot_at_the_cap(
        client, services: Services, redis_client: Any):
    ledger = services.games.ctx.caps.ledger
    gone = "0" * 16  # counted, but its creation never landed
    assert ledger.admit_game(TEST_CLIENT, gone, 4)
    kept = [create(client, seats=2, ai={1: "greedy"})[0] for _ in range(3)]
    assert client.post("/v1/games", json=FLOOD).status_code == 201  # `gone` was dropped
    assert gone not in ledger.open_games(TEST_CLIENT)
    assert set(kept) < set(ledger.open_games(TEST_CLIENT))
    assert client.post("/v1/games", json=FLOOD).status_code == 429
    services.games.ctx.caps = replace(services.games.ctx.caps, idle_s=0)  # all idle now
    assert client.post("/v1/games", json=FLOOD).status_code == 201
    assert ledger.open_games(TEST_CLIENT) == [g for g in ledger.open_games(TEST_CLIENT)
                                              if g not in kept] != []


def test_a_turn_past_the_queued_cap_is_deferred_and_a_read_does_not_queue_it(
        client, services: Services, redis_client: Any):
    queue = Queue(QUEUE_NAME, connection=redis_client)
    first, _ = create(client, seats=2, hands=1, ai={0: "greedy", 1: "greedy"})
    second, _ = create(client, seats=2, hands=1, ai={0: "greedy", 1: "greedy"})
    assert len(queue.job_ids) == 1 and first in queue.job_ids[0]
    client.get(f"/v1/games/{second}")  # a read heals lost turns, but this one is deferred
    client.get(f"/v1/games/{second}/events")
    assert len(queue.job_ids) == 1
    ledger = services.games.ctx.caps.ledger
    second_turn = f"{second}:{services.store.version(second)}"
    assert redis_client.zrange("ai-caps:{addr:127.0.0.1}:deferred", 0, -1) == [
        second_turn.encode()]
    assert services.games.drain_deferred() == 0  # the first still counts as queued
    ledger.finish_turn(TEST_CLIENT, f"{first}:{services.store.version(first)}")
    assert services.games.drain_deferred() == 1  # the sweep's drain
    assert len(queue.job_ids) == 2 and second in queue.job_ids[1]
    assert not redis_client.exists("ai-caps:{addr:127.0.0.1}:deferred")


def test_a_leave_counts_its_game_among_the_open_ai_games_and_is_refused_past_the_cap(client):
    """Leaving makes a game of humans one with an AI seat: it counts as a creation with one
    does, so leaves cannot run more AI games than the cap (429, nothing appended)."""
    for _ in range(3):
        create(client, seats=2, ai={1: "greedy"})
    game_id, tokens = create(client, seats=2)
    left = client.post(f"/v1/games/{game_id}/leave", json={"replace_with": "expert"},
                       headers=auth(tokens[0]))
    assert left.status_code == 200  # the fourth open AI game: at the cap, not past it
    other, others = create(client, seats=2)
    before = client.get(f"/v1/games/{other}").json["version"]
    refused = client.post(f"/v1/games/{other}/leave", json={"replace_with": "expert"},
                          headers=auth(others[0]))
    assert (refused.status_code, refused.json["type"]) == (429, "/problems/too-many-ai-games")
    after = client.get(f"/v1/games/{other}").json
    assert after["version"] == before and after["players"][0]["kind"] == "human"
    again = client.post(f"/v1/games/{game_id}/leave", json={"replace_with": "greedy"},
                        headers=auth(tokens[1]))
    assert again.status_code == 200  # a game counted already is not counted again


def test_a_game_with_a_turn_clock_counts_among_the_open_ai_games(client):
    """A clock's timeouts are the random AI's moves, and may hand it every seat: such games
    count under the same cap, or any number of them would be AI games past it."""
    clocked = {"players": [{"name": f"H{s}", "kind": "human"} for s in range(4)],
               "rules": {"hands": 1, "turn_seconds": 10, "timeouts_to_leave": 1}}
    answers = [client.post("/v1/games", json=clocked).status_code for _ in range(5)]
    assert answers == [201] * 4 + [429]
    create(client, seats=2)  # a game of humans with no clock does not count
