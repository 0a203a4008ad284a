"""Cheap polling: a GET of a state honours If-None-Match with 304 (RFC 9110 13.1.2), after every
check its 200 has, counted by the rate limits, and telling no caller anything of another seat."""

from __future__ import annotations

import pytest

from service.adapters.bootstrap import build
from service.adapters.settings import Settings
from service.api.app import create_app
from tests.api.contract import ContractClient
from tests.api.driver import auth, create
from tests.api.test_hostile import fresh_window


@pytest.fixture
def game(client):
    game_id, tokens = create(client, seats=2, seed=5)
    return game_id, tokens, client.get(f"/v1/games/{game_id}").json["version"]


def assert_not_modified(answer, version: int) -> None:
    """A 304: no body and no type, the state's ETag and the Vary of its 200."""
    assert answer.status_code == 304
    assert answer.get_data() == b"" and "Content-Type" not in answer.headers
    assert answer.headers["ETag"] == f'"{version}"'
    assert "Authorization" in answer.headers["Vary"]


@pytest.mark.parametrize("sent", ['"{v}"', 'W/"{v}"', '"1", "{v}"', ' ,W/"x", "{v}" ,', "*"])
def test_a_state_named_by_if_none_match_is_304(client, game, sent):
    game_id, tokens, version = game
    for headers in ({}, auth(tokens[0])):
        answer = client.get(f"/v1/games/{game_id}",
                            headers={**headers, "If-None-Match": sent.format(v=version)})
        assert_not_modified(answer, version)
    past = client.get(f"/v1/games/{game_id}/state?version=1", headers={"If-None-Match": '"1"'})
    assert_not_modified(past, 1)
    head = client.head(f"/v1/games/{game_id}", headers={"If-None-Match": f'"{version}"'})
    assert head.status_code == 304


@pytest.mark.parametrize("sent", ['"{old}"', '"0{v}"', '"{v}-gzip"', "{v}", '"{v}" "{v}"', ""])
def test_a_state_if_none_match_does_not_name_is_answered_whole(client, game, sent):
    """Another version, another spelling of it, or no list of entity tags (ignored): 200."""
    game_id, tokens, version = game
    answer = client.get(f"/v1/games/{game_id}", headers={
        **auth(tokens[0]), "If-None-Match": sent.format(v=version, old=version - 1)})
    assert answer.status_code == 200 and answer.json["hand"]
    assert answer.headers["ETag"] == f'"{version}"'


def test_after_a_move_the_old_etag_gets_the_new_state(client, game):
    game_id, tokens, version = game
    turn = client.get(f"/v1/games/{game_id}").json["turn"]
    mine = client.get(f"/v1/games/{game_id}", headers=auth(tokens[turn])).json
    client.post(f"/v1/games/{game_id}/moves", json=mine["legal_moves"][0],
                headers=auth(tokens[turn]))
    answer = client.get(f"/v1/games/{game_id}", headers={"If-None-Match": f'"{version}"'})
    assert answer.status_code == 200 and answer.json["version"] > version


def test_a_304_comes_only_after_the_checks_of_a_200(client, game):
    game_id, tokens, version = game
    other_id, other_tokens = create(client, seats=2, seed=6)
    match = {"If-None-Match": "*"}
    assert client.get("/v1/games/0123456789abcdef", headers=match).status_code == 404
    assert client.get(f"/v1/games/{game_id}", headers={
        **match, **auth(tokens[0] + "x")}).status_code == 401
    assert client.get(f"/v1/games/{game_id}", headers={
        **match, **auth(other_tokens[0])}).status_code == 403
    assert client.get(f"/v1/games/{game_id}/state?version={version + 1}",
                      headers=match).status_code == 404
    assert client.get(f"/v1/games/{game_id}/state?version=x", headers=match).status_code == 400


def test_a_seats_etag_is_the_version_everyone_reads_so_it_tells_nothing_of_another_seat(
        client, game):
    """R25: every caller's ETag at one version is the same `"<version>"` a spectator's body
    shows, so a 304 to one caller for another's ETag says only what the spectator reads."""
    game_id, tokens, version = game
    spectator = client.get(f"/v1/games/{game_id}")
    seats = [client.get(f"/v1/games/{game_id}", headers=auth(t)) for t in tokens.values()]
    assert {a.headers["ETag"] for a in [spectator, *seats]} == {f'"{spectator.json["version"]}"'}
    assert seats[0].json["hand"] != seats[1].json["hand"]
    borrowed = client.get(f"/v1/games/{game_id}", headers={
        **auth(tokens[1]), "If-None-Match": seats[0].headers["ETag"]})
    assert_not_modified(borrowed, version)


def test_a_304_counts_toward_the_rate_limit(redis_url, redis_client):
    fresh_window()
    settings = Settings(redis_url=redis_url, seeded_games=True, rate_limit_per_token=4,
                        rate_limit_per_address=0)
    client = ContractClient(create_app({"TESTING": True},
                                       services=build(settings)).test_client())
    game_id, tokens = create(client, seats=2, seed=8)
    version = client.get(f"/v1/games/{game_id}").json["version"]
    polls = [client.get(f"/v1/games/{game_id}", headers={
        **auth(tokens[0]), "If-None-Match": f'"{version}"'}).status_code for _ in range(5)]
    assert polls == [304] * 4 + [429]
