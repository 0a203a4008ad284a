"""Strict requests (issue 17, point 7): bodies only as JSON (415), no key twice (400), a
finished game's stream that stops a browser reconnecting (204), and /metrics restricted by
settings."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from service.adapters.bootstrap import build
from service.adapters.settings import Settings
from service.api.app import create_app
from tests.api.contract import ContractClient
from tests.api.driver import auth, create, play_to_end

PLAYERS = [{"name": "A", "kind": "human"}, {"name": "B", "kind": "human"}]
CREATION = json.dumps({"players": PLAYERS}).encode()


def metrics_client(redis_url: str, **settings: Any) -> ContractClient:
    """A checked client of an app whose /metrics the settings given restrict."""
    services = build(Settings(redis_url=redis_url, rate_limit_per_token=0,
                              rate_limit_per_address=0, **settings))
    return ContractClient(create_app({"TESTING": True}, services=services).test_client())


def version(client: Any, game_id: str) -> int:
    """The game's current version, as a spectator sees it."""
    return int(client.get(f"/v1/games/{game_id}").json["version"])


def mover(client: Any, key: str | None) -> tuple[str, dict[str, str], int]:
    """A new game: its id, the headers of the seat to move (under `key` if given), its version."""
    game_id, tokens = create(client, seats=2)
    state = client.get(f"/v1/games/{game_id}").json
    return game_id, {**auth(tokens[state["turn"]]), **({"Idempotency-Key": key} if key else {})}, \
        state["version"]


# 415: a body is JSON only if it says so ---------------------------------------------------

@pytest.mark.parametrize("content_type", [
    "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x", "application/json; charset=utf-16", "application/jsonx",
    "text/json", None])
def test_a_creation_not_sent_as_json_is_415(client, content_type):
    """A browser posts text/plain, forms and untyped bodies cross-site with no preflight."""
    answer = client.post("/v1/games", data=CREATION, content_type=content_type)
    assert answer.status_code == 415
    assert answer.json["type"] == "/problems/unsupported-media-type"
    if content_type is None:  # an untyped body (a browser's Blob): no Content-Type at all
        assert "Content-Type" not in answer.request.headers


@pytest.mark.parametrize("content_type", [
    "application/json", "application/json; charset=UTF-8", "Application/JSON",
    "application/vnd.spinner+json", "application/merge-patch+json;charset=utf8"])
def test_a_creation_sent_as_json_or_a_json_suffix_type_is_read(client, content_type):
    answer = client.post("/v1/games", data=CREATION, content_type=content_type)
    assert answer.status_code == 201


@pytest.mark.parametrize("key", [None, "k415"], ids=["no key", "Idempotency-Key"])
def test_a_move_sent_as_text_plain_is_415_and_appends_nothing(client, key):
    game_id, headers, before = mover(client, key)
    answer = client.post(f"/v1/games/{game_id}/moves", data=b'{"action": "draw"}',
                         headers=headers, content_type="text/plain")
    assert answer.status_code == 415
    assert version(client, game_id) == before
    if key:  # a 415 is not kept as the key's answer: the body sent right is read
        moved = client.post(f"/v1/games/{game_id}/moves", json={"action": "draw"},
                            headers=headers)
        assert moved.status_code != 415


def test_no_body_and_no_content_type_is_an_empty_body_400_not_415(client):
    game_id, tokens = create(client, seats=2)
    answer = client.post(f"/v1/games/{game_id}/moves", headers=auth(tokens[0]))
    assert answer.status_code == 400
    assert answer.json["errors"] == [{"field": "body", "message": "not an object"}]


# 400: a JSON object names each key once -----------------------------------------------------

def test_a_creation_naming_a_key_twice_is_400_naming_it(client):
    body = b'{"players": %s, "seed": 1, "seed": 2}' % json.dumps(PLAYERS).encode()
    answer = client.post("/v1/games", data=body, content_type="application/json")
    assert answer.status_code == 400
    assert answer.json["errors"] == [{"field": "seed", "message": "duplicate key"}]


def test_a_key_twice_in_a_nested_object_is_400_too(client):
    body = b'{"players": [{"name": "A", "name": "Z", "kind": "human"}, ' \
           b'{"name": "B", "kind": "human"}]}'
    answer = client.post("/v1/games", data=body, content_type="application/json")
    assert answer.status_code == 400
    assert answer.json["errors"] == [{"field": "name", "message": "duplicate key"}]


@pytest.mark.parametrize("key", [None, "k400"], ids=["no key", "Idempotency-Key"])
def test_a_move_naming_a_key_twice_is_400_and_appends_nothing(client, key):
    game_id, headers, before = mover(client, key)
    body = b'{"action": "pass", "action": "draw"}'
    for _ in range(2):  # under a key, the second answer is the first one again
        answer = client.post(f"/v1/games/{game_id}/moves", data=body, headers=headers,
                             content_type="application/json")
        assert answer.status_code == 400
        assert answer.json["errors"] == [{"field": "action", "message": "duplicate key"}]
    assert version(client, game_id) == before
    if key:  # the last value alone is another body: the key is spent on the one sent
        other = client.post(f"/v1/games/{game_id}/moves", json={"action": "draw"},
                            headers=headers)
        assert other.status_code == 422


# 204: a finished game's stream tells a browser to stop ---------------------------------------

def finished_game(client: Any) -> tuple[str, int]:
    """Play a 1-hand game to its end; return its id and final version."""
    game_id, tokens = create(client, seats=2, seed=21)
    final = play_to_end(client, game_id, tokens, random.Random(21))
    return game_id, final["version"]


def test_a_finished_games_stream_with_nothing_left_is_204(client):
    game_id, final = finished_game(client)
    for resume in ({"Last-Event-ID": str(final)}, {"Last-Event-ID": str(final + 5)}):
        answer = client.get(f"/v1/games/{game_id}/stream", headers=resume)
        assert answer.status_code == 204
        assert answer.data == b"" and "Content-Type" not in answer.headers
    assert client.get(f"/v1/games/{game_id}/stream?after={final}").status_code == 204


def test_a_finished_games_stream_still_sends_what_is_left_then_204(client):
    game_id, final = finished_game(client)
    answer = client.get(f"/v1/games/{game_id}/stream",
                        headers={"Last-Event-ID": str(final - 2)})
    assert answer.status_code == 200
    ids = [line for line in answer.get_data(as_text=True).splitlines() if line.startswith("id:")]
    assert ids == [f"id: {final - 1}", f"id: {final}"]
    again = client.get(f"/v1/games/{game_id}/stream", headers={"Last-Event-ID": str(final)})
    assert again.status_code == 204  # where EventSource reconnects to, and stops


# /metrics: restricted by settings -------------------------------------------------------------

def test_metrics_restricted_to_addresses_refuses_others(redis_url, redis_client):
    client = metrics_client(redis_url, metrics_allowed="10.0.0.0/8, 192.0.2.7")
    assert client.get("/metrics").status_code == 403  # from 127.0.0.1
    refused = client.get("/metrics", environ_overrides={"REMOTE_ADDR": "192.0.2.8"})
    assert refused.status_code == 403 and refused.json["type"] == "/problems/restricted"
    for allowed in ("10.1.2.3", "192.0.2.7"):
        answer = client.get("/metrics", environ_overrides={"REMOTE_ADDR": allowed})
        assert answer.status_code == 200 and b"spinner_http_requests" in answer.data


def test_metrics_restricted_to_a_token_needs_that_bearer_token(redis_url, redis_client):
    client = metrics_client(redis_url, metrics_token="s3cret-metrics")
    for headers in ({}, auth("wrong"), {"Authorization": "Basic czNjcmV0"}):
        assert client.get("/metrics", headers=headers).status_code == 403
    assert client.get("/metrics", headers=auth("s3cret-metrics")).status_code == 200


def test_metrics_with_both_settings_let_in_either(redis_url, redis_client):
    client = metrics_client(redis_url, metrics_allowed="127.0.0.1", metrics_token="t0k")
    assert client.get("/metrics").status_code == 200
    outside = {"REMOTE_ADDR": "203.0.113.9"}
    assert client.get("/metrics", environ_overrides=outside).status_code == 403
    assert client.get("/metrics", environ_overrides=outside,
                      headers=auth("t0k")).status_code == 200


# A seat's Idempotency-Keys are capped ----------------------------------------------------------

def test_a_new_key_past_the_seats_cap_is_429_while_kept_keys_still_answer(redis_url,
                                                                          redis_client):
    services = build(Settings(redis_url=redis_url, rate_limit_per_token=0,
                              rate_limit_per_address=0, idempotency_keys_per_seat=3))
    client = ContractClient(create_app({"TESTING": True}, services=services).test_client())
    game_id, tokens = create(client, seats=2)
    turn = client.get(f"/v1/games/{game_id}").json["turn"]
    idle = auth(tokens[1 - turn])  # out of turn: each key keeps a 409
    for key in ("k1", "k2", "k3"):
        answer = client.post(f"/v1/games/{game_id}/moves", json={"action": "draw"},
                             headers={**idle, "Idempotency-Key": key})
        assert answer.status_code == 409
    refused = client.post(f"/v1/games/{game_id}/moves", json={"action": "draw"},
                          headers={**idle, "Idempotency-Key": "k4"})
    assert refused.status_code == 429 and refused.json["type"] == "/problems/rate-limited"
    assert 86000 < int(refused.headers["Retry-After"]) <= 86400  # when k1 expires
    again = client.post(f"/v1/games/{game_id}/moves", json={"action": "draw"},
                        headers={**idle, "Idempotency-Key": "k1"})
    assert again.status_code == 409  # a kept key is a replay, never refused by the cap
    assert client.post(f"/v1/games/{game_id}/moves", json={"action": "draw"},
                       headers=idle).status_code == 409  # no key: not counted
    mover = client.post(f"/v1/games/{game_id}/moves", json={"action": "draw"},
                        headers={**auth(tokens[turn]), "Idempotency-Key": "k4"})
    assert mover.status_code in (200, 422)  # another seat's keys are its own
