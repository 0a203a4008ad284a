"""POST /v1/games and bad input (API.md "Creating a game", R4, R7)."""

from __future__ import annotations

import pytest

from tests.api.driver import create

HUMAN = {"name": "Ann", "kind": "human"}
BOT = {"name": "Bot", "kind": "ai", "level": "greedy"}


def test_create_returns_a_token_for_each_human_seat_only(client):
    answer = client.post("/v1/games", json={"players": [HUMAN, BOT, HUMAN]})
    assert answer.status_code == 201
    seats = answer.json["seats"]
    assert [s["seat"] for s in seats] == [0, 1, 2]
    assert ["token" in s for s in seats] == [True, False, True]
    assert seats[0]["token"] != seats[2]["token"]
    assert answer.json["version"] >= 2  # game_created, hand_started (and any search draws)
    assert answer.headers["Location"].endswith(answer.json["game_id"])


def test_create_fills_in_default_rules_and_level(client):
    game_id, _ = create(client, seats=2, seed=None)
    answer = client.post("/v1/games", json={"players": [HUMAN, {"name": "B", "kind": "ai"}]})
    state = client.get(f"/v1/games/{answer.json['game_id']}").json
    assert state["rules"] == {"variant": "spinner", "hands": 10, "opening": "draw"}
    assert state["players"][1]["level"] == "expert"
    assert client.get(f"/v1/games/{game_id}").json["hand_number"] == 1


def test_an_integer_sent_with_a_zero_fraction_is_that_integer(client):
    """`4.0` is the integer 4 to JSON Schema, and so to openapi.yaml's `integer`: an outside
    fuzzer (schemathesis) sends it as valid data, and a generated client may too."""
    answer = client.post("/v1/games", json={"players": [HUMAN, HUMAN], "rules": {"hands": 4.0},
                                            "seed": 7.0})
    assert answer.status_code == 201, answer.json
    assert client.get(f"/v1/games/{answer.json['game_id']}").json["rules"]["hands"] == 4


def test_the_server_keeps_only_token_hashes(client, redis_client):
    answer = client.post("/v1/games", json={"players": [HUMAN, HUMAN]})
    tokens = [s["token"] for s in answer.json["seats"]]
    stored = b"".join(redis_client.dump(k) or b"" for k in redis_client.keys("*"))
    assert all(t.encode() not in stored and t.split(".")[1].encode() not in stored
               for t in tokens)


@pytest.mark.parametrize(("body", "field"), [
    ({"players": [HUMAN]}, "players"),  # R4: at least 2
    ({"players": [HUMAN] * 9}, "players"),  # R4: at most 8
    ({"players": [{"name": "x" * 65, "kind": "human"}, HUMAN]}, "players.0.name"),
    ({"players": [{"name": "A", "kind": "robot"}, HUMAN]}, "players.0.kind"),
    ({"players": [{"name": "A", "kind": "ai", "level": "god"}, HUMAN]}, "players.0.level"),
    ({"players": [HUMAN, HUMAN], "rules": {"hands": 0}}, "rules.hands"),  # R7
    ({"players": [HUMAN, HUMAN], "rules": {"hands": 11}}, "rules.hands"),
    ({"players": [HUMAN, HUMAN], "rules": {"hands": "3"}}, "rules.hands"),
    ({"players": [HUMAN, HUMAN], "rules": {"opening": "magic"}}, "rules.opening"),
    ({"players": [HUMAN, HUMAN], "colour": "red"}, "colour"),
    ({"players": [HUMAN, HUMAN], "seed": 1.5}, "seed"),
    ({"players": [HUMAN, HUMAN], "seed": True}, "seed"),
    ({}, "players"),
])
def test_bad_creation_requests_get_400_naming_the_field(client, body, field):
    answer = client.post("/v1/games", json=body)
    assert answer.status_code == 400
    assert answer.mimetype == "application/problem+json"
    assert field in [e["field"] for e in answer.json["errors"]]


@pytest.mark.parametrize(("rules", "field", "message"), [
    ({"hands": 0}, "rules.hands", "a match has 1 to 10 hands (R7)"),
    ({"hands": 11}, "rules.hands", "a match has 1 to 10 hands (R7)"),
    ({"opening": "magic"}, "rules.opening", "the opening is draw or next_lower (R9)"),
])
def test_R7_R9_a_rule_option_out_of_its_range_gets_400_citing_its_rule(
        client, rules, field, message):
    answer = client.post("/v1/games", json={"players": [HUMAN, HUMAN], "rules": rules})
    assert answer.status_code == 400
    assert answer.json["errors"] == [{"field": field, "message": message}]


@pytest.mark.parametrize(("body", "fields"), [
    ({"players": [HUMAN] * 8 + [{"name": "", "kind": "human"}]},
     {"players", "players.8.name"}),  # R4 and a bad name
    ({"players": [{"name": "", "kind": "human", "level": "greedy"}, HUMAN]},
     {"players.0.name", "players.0.level"}),
    ({"players": [HUMAN], "rules": {"hands": 0}, "seed": "x"},
     {"players", "rules.hands", "seed"}),
])
def test_a_creation_request_with_several_bad_fields_gets_400_naming_each(client, body, fields):
    answer = client.post("/v1/games", json=body)
    assert answer.status_code == 400
    assert {e["field"] for e in answer.json["errors"]} == fields


@pytest.mark.parametrize("data", [b"{not json", b"[1, 2]", b"", b"\xff\xfe",
                                  b'{"a":' + b"[" * 30_000 + b"]" * 30_000 + b"}"])
def test_a_body_that_is_not_a_json_object_gets_400(client, data):
    answer = client.post("/v1/games", data=data, content_type="application/json")
    assert answer.status_code == 400
    assert answer.json["errors"][0]["field"] == "body"


def test_a_body_over_64_kib_gets_413(client):
    answer = client.post("/v1/games", data=b"{" + b" " * 70_000 + b"}",
                         content_type="application/json")
    assert answer.status_code == 413
    assert answer.mimetype == "application/problem+json"


def test_unknown_paths_and_methods_are_problems(client):
    assert client.get("/v1/nowhere").status_code == 404
    answer = client.delete("/v1/games")
    assert answer.status_code == 405
    assert answer.mimetype == "application/problem+json"


def test_a_seed_longer_than_python_reads_is_a_400_naming_seed(client):
    players = b'[{"name": "A", "kind": "human"}, {"name": "B", "kind": "human"}]'
    body = b'{"players": %s, "seed": %s}' % (players, b"9" * 5000)
    answer = client.post("/v1/games", data=body, content_type="application/json")
    assert answer.status_code == 400
    assert [error["field"] for error in answer.json["errors"]] == ["seed"]
