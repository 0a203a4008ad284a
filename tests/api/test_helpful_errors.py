"""Errors that help: a misspelt tile names its canonical form (R2), a number out of range says
the range, and an unknown game's 404 is one answer whatever the id sent, showing none of it."""

from __future__ import annotations

import json

import pytest

from service.adapters.bootstrap import build
from service.adapters.redis_store import game_key
from service.api.app import create_app
from tests.api.driver import auth, create


@pytest.fixture
def game(client):
    game_id, tokens = create(client, seats=2, seed=3)
    state = client.get(f"/v1/games/{game_id}").json
    return game_id, tokens, state


@pytest.mark.parametrize(("sent", "canonical"), [
    ("s-s", "S-S"), ("9-3", "3-9"), ("s-5", "5-S"), ("10-2", "2-S"), (" 4-3 ", "3-4"),
    ("9\u20133", "3-9")])
def test_R2_a_misspelt_tile_names_its_canonical_form_in_the_field_and_the_detail(
        client, game, sent, canonical):
    game_id, tokens, state = game
    answer = client.post(f"/v1/games/{game_id}/moves", headers=auth(tokens[state["turn"]]),
                         json={"action": "play", "tile": sent, "end": "e1"})
    assert answer.status_code == 400
    wanted = f"violates R2: {sent!r} is not in canonical form: write {canonical!r}"
    assert answer.json["errors"] == [{"field": "tile", "message": wanted}]
    assert answer.json["detail"] == f"tile: {wanted}"


@pytest.mark.parametrize(("sent", "says"), [
    ("6-3", "is not in canonical form: write '3-6'"),
    ("7-1", "is not a tile of this game's set: write A-B with digits 0-6"),
    ("S-5", "is not a tile of this game's set: write A-B with digits 0-6"),
    ("10-2", "is not a tile of this game's set: write A-B with digits 0-6"),
    ("x", "is not a tile of this game's set: write A-B with digits 0-6")])
def test_R2_F1_a_misspelt_tile_in_all_fives_is_named_only_if_the_double_six_set_has_it(
        client, sent, says):
    """All Fives plays the double-six set (F1: no `S`, no half above 6): a misspelling of
    none of its tiles is said to be no tile, not named as a Spinner tile it would refuse."""
    game_id, tokens = create(client, seats=2, seed=3, rules={"variant": "all_fives"})
    state = client.get(f"/v1/games/{game_id}").json
    answer = client.post(f"/v1/games/{game_id}/moves", headers=auth(tokens[state["turn"]]),
                         json={"action": "play", "tile": sent})
    assert answer.status_code == 400
    assert answer.json["errors"] == [{"field": "tile", "message": f"violates R2: {sent!r} {says}"}]


def test_R2_F1_a_game_whose_meta_names_no_variant_is_known_by_its_log(
        client, settings, redis_client):
    """A game created before its meta kept its variant: the variant comes from its log."""
    game_id, tokens = create(client, seats=2, seed=3, rules={"variant": "all_fives"})
    assert redis_client.hdel(game_key(game_id, "meta"), "variant") == 1
    fresh = create_app({"TESTING": True}, services=build(settings)).test_client()  # no cache
    turn = fresh.get(f"/v1/games/{game_id}").json["turn"]
    answer = fresh.post(f"/v1/games/{game_id}/moves", headers=auth(tokens[turn]),
                        json={"action": "play", "tile": "7-1"})
    assert answer.status_code == 400
    assert "is not a tile of this game's set" in answer.json["errors"][0]["message"]


def test_R2_what_is_no_tile_says_so_without_quoting_a_long_text_back(client, game):
    game_id, tokens, state = game
    answer = client.post(f"/v1/games/{game_id}/moves", headers=auth(tokens[state["turn"]]),
                         json={"action": "play", "tile": "q" * 5000, "end": "e1"})
    assert answer.status_code == 400
    assert answer.json["errors"][0]["message"] == (
        "violates R2: the text sent is not a tile: write A-B with digits 0-9 or S")
    assert "qq" not in answer.get_data(as_text=True)


@pytest.mark.parametrize("sent", ["0", "-1", "abc", "1.5", "", "\uff11"])
def test_a_version_out_of_range_says_the_range_in_the_field_and_the_detail(client, game, sent):
    game_id, _, _ = game
    answer = client.get(f"/v1/games/{game_id}/state", query_string={"version": sent})
    assert answer.status_code == 400
    assert answer.json["detail"] == "version must be an integer >= 1"
    assert answer.json["errors"] == [{"field": "version", "message": "must be an integer >= 1"}]


def test_a_missing_version_and_a_bad_after_say_the_range_too(client, game):
    game_id, _, _ = game
    missing = client.get(f"/v1/games/{game_id}/state")
    assert missing.json["detail"] == "give ?version=N, an integer >= 1"
    assert missing.json["errors"] == [{"field": "version",
                                       "message": "required: an integer >= 1"}]
    after = client.get(f"/v1/games/{game_id}/events?after=-1")
    assert after.json["detail"] == "after must be an integer >= 0"
    assert after.json["errors"] == [{"field": "after", "message": "must be an integer >= 0"}]


def test_every_bad_header_and_every_bad_query_parameter_is_named_in_one_400(client, game):
    game_id, tokens, state = game
    move = client.post(f"/v1/games/{game_id}/moves", json={"action": "draw"},
                       headers={**auth(tokens[state["turn"]]), "If-Match": "12",
                                "Idempotency-Key": ""})
    assert move.status_code == 400
    assert [error["field"] for error in move.json["errors"]] == ["If-Match", "Idempotency-Key"]
    assert move.json["detail"] == "some fields are invalid"
    stream = client.get(f"/v1/games/{game_id}/stream?after=-1&state=yes")
    assert stream.status_code == 400
    assert [error["field"] for error in stream.json["errors"]] == ["after", "state"]
    assert client.get(f"/v1/games/{game_id}").json["version"] == state["version"]


def test_a_number_of_the_wrong_type_says_the_range_of_its_field(client, game):
    game_id, tokens, state = game
    answer = client.post("/v1/games", json={"players": [{"name": "A", "kind": "human"}] * 2,
                                            "rules": {"hands": "ten"}})
    assert answer.json["errors"] == [{"field": "rules.hands",
                                      "message": "a match has 1 to 10 hands (R7)"}]
    move = client.post(f"/v1/games/{game_id}/moves", headers=auth(tokens[state["turn"]]),
                       json={"action": "play", "tile": "9-9", "expose": "9"})
    assert move.json["errors"] == [{"field": "expose", "message": "expose is 0-9 (R14)"}]


UNKNOWN_IDS = ["0123456789abcdef", "nope", "x", "x" * 3000, "ABCDEF0123456789",
               "\u00fcn\u00efc\u00f8d\u00e9-\u2603", "a}b{c", "g.t0k3n", "%00", "..."]
PATHS = ["/v1/games/{}", "/v1/games/{}/events", "/v1/games/{}/state?version=1",
         "/v1/games/{}/stream", "/v1/games/{}/export"]


@pytest.mark.parametrize("path", PATHS)
def test_an_unknown_games_404_is_the_same_for_any_id_and_shows_none(client, path):
    bodies = set()
    for game_id in UNKNOWN_IDS:
        answer = client.get(path.format(game_id), headers=auth(f"{game_id}.token"))
        assert answer.status_code == 404, game_id
        text = answer.get_data(as_text=True)
        assert game_id not in text
        bodies.add(answer.get_data())
    moved = client.post(f"/v1/games/{UNKNOWN_IDS[1]}/moves", json={"action": "draw"})
    bodies.add(moved.get_data())
    assert len(bodies) == 1
    assert json.loads(bodies.pop())["detail"] == "there is no game with that id"
