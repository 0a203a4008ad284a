"""Answers are never wrong about what landed (issue 16, point 2): a move or a creation whose
append ran but whose reply was lost (the script is run again on a new connection) is
answered as landed, and an Idempotency-Key keeps that answer; a move whose claim of its key
ran but whose reply was lost is served, not refused as pending."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from service.adapters.redis_store import APPEND_LUA, BEGIN_LUA, CREATE_LUA
from tests.api.contract import ContractClient
from tests.api.driver import auth, create
from tests.integration.test_lost_reply import lose_the_next_reply


def to_move(client: ContractClient) -> tuple[str, int, int, dict[str, Any], dict[str, str]]:
    """Create a two-seat game; return its id, the seat to move, the version, that seat's first
    legal move and the headers of a move of it (token, If-Match, Idempotency-Key)."""
    game_id, tokens = create(client, seats=2)
    seat = client.get(f"/v1/games/{game_id}").json["turn"]
    mine = client.get(f"/v1/games/{game_id}", headers=auth(tokens[seat]))
    version, move = mine.json["version"], mine.json["legal_moves"][0]
    headers = {**auth(tokens[seat]), "If-Match": f'"{version}"', "Idempotency-Key": "m1"}
    return game_id, seat, version, move, headers


def test_a_move_whose_reply_was_lost_is_answered_200_and_kept_under_its_key(
        client: ContractClient, redis_client: redis.Redis,
        monkeypatch: pytest.MonkeyPatch) -> None:
    game_id, seat, version, move, headers = to_move(client)
    redis_client.script_load(APPEND_LUA)  # so that its first EVALSHA runs
    sent = lose_the_next_reply(monkeypatch, redis_client)
    answer = client.post(f"/v1/games/{game_id}/moves", json=move, headers=headers)
    assert len(sent) == 2  # run, its reply lost, run again: it found its own append
    assert answer.status_code == 200, answer.json
    assert answer.json["version"] > version
    assert answer.headers["ETag"] == f'"{answer.json["version"]}"'
    again = client.post(f"/v1/games/{game_id}/moves", json=move, headers=headers)
    assert again.status_code == 200 and again.json["version"] == answer.json["version"]
    log = client.get(f"/v1/games/{game_id}/events?after={version}").json["events"]
    assert log[0]["seat"] == seat and log[-1]["seq"] == answer.json["version"]


def test_a_move_whose_claims_reply_was_lost_is_served_not_409(
        client: ContractClient, redis_client: redis.Redis,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The claim ran again finds its own pending record: the request's, not another's."""
    game_id, _, version, move, headers = to_move(client)
    redis_client.script_load(BEGIN_LUA)  # so that its first EVALSHA runs
    sent = lose_the_next_reply(monkeypatch, redis_client, BEGIN_LUA)
    answer = client.post(f"/v1/games/{game_id}/moves", json=move, headers=headers)
    assert len(sent) == 2
    assert answer.status_code == 200, answer.json
    assert answer.json["version"] == redis_client.xlen(f"game:{{{game_id}}}:events") > version


def test_a_creation_whose_reply_was_lost_is_answered_201(
        client: ContractClient, redis_client: redis.Redis,
        monkeypatch: pytest.MonkeyPatch) -> None:
    redis_client.script_load(CREATE_LUA)  # so that its first EVALSHA runs
    sent = lose_the_next_reply(monkeypatch, redis_client, CREATE_LUA)
    game_id, tokens = create(client, seats=2)
    assert len(sent) == 2
    assert client.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).json["seat"] == 0
