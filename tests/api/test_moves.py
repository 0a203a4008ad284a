"""POST /v1/games/{id}/moves: auth, rule errors, If-Match, Idempotency-Key (API.md "Moves")."""

from __future__ import annotations

import threading

import pytest

from service.api import problems
from service.api.requests import load_body
from service.api.schemas import MoveIn
from tests.api.driver import auth, create


@pytest.fixture
def game(client):
    """A fresh 2-seat human game: (game_id, tokens, the state seen by the seat to move)."""
    game_id, tokens = create(client, seats=2, hands=1, seed=7)
    turn = client.get(f"/v1/games/{game_id}").json["turn"]
    state = client.get(f"/v1/games/{game_id}", headers=auth(tokens[turn])).json
    return game_id, tokens, state


def _post(client, game_id, token, body, **headers):
    return client.post(f"/v1/games/{game_id}/moves", json=body,
                       headers={**auth(token), **headers})


def test_R10_the_seat_to_move_opens_with_the_opening_double(client, game):
    game_id, tokens, state = game
    move = state["legal_moves"][0]
    assert move["end"] is None and move["tile"] in (state["opening_double"], "S-S")
    answer = _post(client, game_id, tokens[state["turn"]], move)
    assert answer.status_code == 200
    assert answer.json["version"] == state["version"] + 1
    assert answer.headers["ETag"] == f'"{answer.json["version"]}"'
    assert [t["tile"] for t in answer.json["layout"]["tiles"]] == [move["tile"]]
    assert len(answer.json["layout"]["ends"]) == 4  # R12


def test_unknown_game_is_404_before_any_token_check(client):
    assert client.get("/v1/games/nope").status_code == 404
    answer = client.post("/v1/games/nope/moves", json={"action": "draw"})
    assert answer.status_code == 404
    assert answer.json["detail"] == "there is no game with that id"


def test_a_404_never_shows_the_id_nor_a_token_sent_in_its_place(client, game):
    _, tokens, _ = game
    for sent in ("0123456789abcdef", tokens[0], "x" * 3000):
        answer = client.get(f"/v1/games/{sent}/events")
        assert answer.status_code == 404
        assert answer.json["detail"] == "there is no game with that id"
        assert sent not in answer.get_data(as_text=True)


def test_tokens_401_without_or_with_a_bad_one_and_403_for_another_games(client, game):
    game_id, tokens, state = game
    other_id, other_tokens = create(client, seats=2)
    body = state["legal_moves"][0]
    anonymous = client.post(f"/v1/games/{game_id}/moves", json=body)
    assert anonymous.status_code == 401 and anonymous.headers["WWW-Authenticate"] == "Bearer"
    for bad in (tokens[0] + "x", "garbage"):
        answer = _post(client, game_id, bad, body)
        assert answer.status_code == 401
        assert answer.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'
    assert _post(client, game_id, other_tokens[0], body).status_code == 403
    basic = client.post(f"/v1/games/{game_id}/moves", json=body,
                        headers={"Authorization": "Basic abc"})
    assert basic.status_code == 401 and basic.headers["WWW-Authenticate"] == "Bearer"
    empty = client.post(f"/v1/games/{game_id}/moves", json=body,
                        headers={"Authorization": "Bearer  "})
    assert empty.status_code == 401
    assert empty.headers["WWW-Authenticate"] == 'Bearer error="invalid_request"'
    assert client.get(f"/v1/games/{game_id}", headers=auth("forged")).status_code == 401
    assert client.get(f"/v1/games/{game_id}").json["version"] == state["version"]


def test_R4_a_move_out_of_turn_is_409(client, game):
    game_id, tokens, state = game
    other = 1 - state["turn"]
    answer = _post(client, game_id, tokens[other], {"action": "draw"})
    assert answer.status_code == 409
    assert answer.json["rule"] == "R4"


def test_R10_a_move_the_rules_forbid_is_422_with_the_rule_and_legal_moves(client, game):
    game_id, tokens, state = game
    not_opener = next(t for t in state["hand"] if t not in (state["opening_double"], "S-S"))
    answer = _post(client, game_id, tokens[state["turn"]],
                   {"action": "play", "tile": not_opener, "end": None})
    assert answer.status_code == 422
    assert answer.json["rule"] == "R10"
    assert "R10" in answer.json["detail"]
    assert answer.json["legal_moves"] == state["legal_moves"]
    assert client.get(f"/v1/games/{game_id}").json["version"] == state["version"]


def test_R16_a_tile_not_held_is_422(client, game):
    game_id, tokens, state = game
    missing = next(t for t in ("0-0", "1-1", "2-2", "3-3") if t not in state["hand"])
    answer = _post(client, game_id, tokens[state["turn"]],
                   {"action": "play", "tile": missing, "end": None})
    assert answer.status_code == 422
    assert answer.json["rule"] == "R16"


@pytest.mark.parametrize(("body", "field"), [
    ({"action": "play", "tile": "9-3", "end": "e1"}, "tile"),  # R2: names 3-9
    ({"action": "play", "tile": "s-5", "end": "e1"}, "tile"),
    ({"action": "play", "tile": "10-2", "end": "e1"}, "tile"),
    ({"action": "play", "tile": "3-9", "end": "e1", "expose": 10}, "expose"),
    ({"action": "play", "tile": "3-9", "end": "e1", "expose": "3"}, "expose"),
    ({"action": "play", "end": "e1"}, "tile"),
    ({"action": "jump"}, "action"),
    ({"action": "draw", "tile": "3-9"}, "tile"),
    ({"action": "pass", "why": "tired"}, "why"),
    ({"tile": "3-9"}, "action"),
])
def test_R2_R14_malformed_moves_get_400_naming_the_field(client, game, body, field):
    game_id, tokens, state = game
    answer = _post(client, game_id, tokens[state["turn"]], body)
    assert answer.status_code == 400
    assert field in [e["field"] for e in answer.json["errors"]]


@pytest.mark.parametrize(("body", "fields"), [
    ({"action": "draw", "tile": "5-S", "foo": 1}, {"tile", "foo"}),
    ({"action": "pass", "tile": "5-S", "end": "e1", "expose": 3}, {"tile", "end", "expose"}),
    ({"action": "play", "end": 5}, {"tile", "end"}),
    ({"action": "play", "tile": "9-3", "end": "e1", "expose": 10}, {"tile", "expose"}),
])
def test_a_move_with_several_bad_fields_gets_400_naming_each(client, game, body, fields):
    game_id, tokens, state = game
    answer = _post(client, game_id, tokens[state["turn"]], body)
    assert answer.status_code == 400
    assert {e["field"] for e in answer.json["errors"]} == fields


def test_R2_a_misspelt_tile_error_names_the_canonical_form(client, game):
    game_id, tokens, state = game
    answer = _post(client, game_id, tokens[state["turn"]],
                   {"action": "play", "tile": "9-3", "end": "e1"})
    assert "3-9" in answer.json["errors"][0]["message"]


def test_if_match_with_an_old_version_is_412_with_the_current_version(client, game):
    game_id, tokens, state = game
    token = tokens[state["turn"]]
    stale = f'"{state["version"] - 1}"'
    answer = _post(client, game_id, token, state["legal_moves"][0], **{"If-Match": stale})
    assert answer.status_code == 412
    assert answer.json["version"] == state["version"]
    fresh = _post(client, game_id, token, state["legal_moves"][0],
                  **{"If-Match": f'"{state["version"]}"'})
    assert fresh.status_code == 200


@pytest.mark.parametrize("sent", ['{v}', '"{v}', '{v}"', "'{v}'", 'W/{v}', 'w/"{v}"', ' , ',
                                  '"{v}" "{v}"', '*, "{v}"', '"{v}"x'])
def test_an_if_match_that_is_not_a_list_of_entity_tags_gets_400(client, game, sent):
    game_id, tokens, state = game
    answer = _post(client, game_id, tokens[state["turn"]], state["legal_moves"][0],
                   **{"If-Match": sent.format(v=state["version"])})
    assert answer.status_code == 400
    assert [e["field"] for e in answer.json["errors"]] == ["If-Match"]
    assert client.get(f"/v1/games/{game_id}").json["version"] == state["version"]


@pytest.mark.parametrize("sent", ['W/"{v}"', '"0{v}"', '"v{v}"', '""', '"{v},"', '"1", W/"{v}"'])
def test_an_if_match_naming_no_version_as_the_etag_spells_it_gets_412(client, game, sent):
    """RFC 9110 13.1.1: If-Match compares strongly, so a weak tag matches nothing."""
    game_id, tokens, state = game
    answer = _post(client, game_id, tokens[state["turn"]], state["legal_moves"][0],
                   **{"If-Match": sent.format(v=state["version"])})
    assert answer.status_code == 412 and answer.json["version"] == state["version"]
    assert client.get(f"/v1/games/{game_id}").json["version"] == state["version"]


@pytest.mark.parametrize("sent", ['"1", "{v}"', '"{v}", W/"{v}"', ' ,"{v}" ,, "x", '])
def test_an_if_match_list_naming_the_version_among_others_lands(client, game, sent):
    game_id, tokens, state = game
    answer = _post(client, game_id, tokens[state["turn"]], state["legal_moves"][0],
                   **{"If-Match": sent.format(v=state["version"])})
    assert answer.status_code == 200 and answer.json["version"] > state["version"]


def test_idempotency_key_replays_the_first_answer_and_appends_nothing(client, game):
    game_id, tokens, state = game
    token, move = tokens[state["turn"]], state["legal_moves"][0]
    first = _post(client, game_id, token, move, **{"Idempotency-Key": "k1"})
    again = _post(client, game_id, token, move, **{"Idempotency-Key": "k1"})
    assert first.status_code == again.status_code == 200
    assert again.json == first.json
    assert client.get(f"/v1/games/{game_id}").json["version"] == state["version"] + 1
    other = _post(client, game_id, token, {"action": "pass"}, **{"Idempotency-Key": "k1"})
    assert other.status_code == 422


def test_idempotency_key_replays_a_first_error_too(client, game):
    game_id, tokens, state = game
    token = tokens[state["turn"]]
    bad = {"action": "pass"}
    first = _post(client, game_id, token, bad, **{"Idempotency-Key": "k2"})
    again = _post(client, game_id, token, bad, **{"Idempotency-Key": "k2"})
    assert first.status_code == again.status_code == 422
    assert again.json == first.json


def test_a_key_used_once_answers_422_to_another_body_even_one_that_does_not_fit(client, game):
    game_id, tokens, state = game
    token, move = tokens[state["turn"]], state["legal_moves"][0]
    assert _post(client, game_id, token, move, **{"Idempotency-Key": "k3"}).status_code == 200
    for other in ({"action": "jump"}, {"action": "draw", "tile": "5-S"}):
        answer = _post(client, game_id, token, other, **{"Idempotency-Key": "k3"})
        assert answer.status_code == 422
        assert answer.json["type"] == "/problems/idempotency-key-reused"
    assert client.get(f"/v1/games/{game_id}").json["version"] == state["version"] + 1


@pytest.mark.parametrize("bad", [{"action": "jump"}, b"{not json"])
def test_a_key_first_sent_with_a_body_that_does_not_fit_keeps_that_400(client, game, bad):
    game_id, tokens, state = game
    token, key = tokens[state["turn"]], {"Idempotency-Key": "k4"}

    def send(body):
        if isinstance(body, bytes):
            return client.post(f"/v1/games/{game_id}/moves", data=body,
                               headers={**auth(token), **key, "Content-Type": "application/json"})
        return _post(client, game_id, token, body, **key)

    first, again = send(bad), send(bad)
    assert first.status_code == again.status_code == 400
    assert again.json == first.json
    other = send(state["legal_moves"][0])
    assert other.status_code == 422
    assert client.get(f"/v1/games/{game_id}").json["version"] == state["version"]


def test_idempotency_keys_are_scoped_to_the_seat(client, game):
    game_id, tokens, state = game
    mover, other = state["turn"], 1 - state["turn"]
    key = {"Idempotency-Key": "shared"}
    first = _post(client, game_id, tokens[mover], state["legal_moves"][0], **key)
    theirs = client.get(f"/v1/games/{game_id}", headers=auth(tokens[other])).json
    answer = _post(client, game_id, tokens[other], theirs["legal_moves"][0], **key)
    assert answer.status_code == 200
    assert answer.json["seat"] == other
    assert answer.json["version"] > first.json["version"]


def test_sixteen_racing_copies_of_one_move_land_exactly_once(client, game):
    game_id, tokens, state = game
    token, move, version = tokens[state["turn"]], state["legal_moves"][0], state["version"]
    statuses: list[int] = []
    barrier = threading.Barrier(16)

    def send() -> None:
        barrier.wait()
        answer = _post(client, game_id, token, move, **{"If-Match": f'"{version}"'})
        statuses.append(answer.status_code)

    threads = [threading.Thread(target=send) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200] + [412] * 15
    events = client.get(f"/v1/games/{game_id}/events").json["events"]
    assert [e["type"] for e in events].count("tile_played") == 1


def test_a_move_beaten_to_the_append_loses_with_409_even_when_its_seat_is_to_move_again(
        client, services, game, monkeypatch):
    """API.md: two moves that race for the same seat and version never both land. Between the
    loser's decision and its append, the winner lands and the other seat answers, so the
    loser's seat is to move again; the loser is still refused, not decided again."""
    game_id, tokens, state = game
    mover, other = state["turn"], 1 - state["turn"]
    append, raced = services.store.append, []

    def winner_lands_first(*args, **kwargs):
        if not raced:
            raced.append(True)
            services.games.move(game_id, mover, state["legal_moves"][0], None, None)
            theirs = client.get(f"/v1/games/{game_id}", headers=auth(tokens[other])).json
            services.games.move(game_id, other, theirs["legal_moves"][0], None, None)
        return append(*args, **kwargs)

    monkeypatch.setattr(services.store, "append", winner_lands_first)
    answer = _post(client, game_id, tokens[mover], state["legal_moves"][0])
    assert answer.status_code == 409, answer.json
    assert answer.json["type"] == "/problems/race-lost"
    assert answer.json["version"] == state["version"] + 2
    now = client.get(f"/v1/games/{game_id}", headers=auth(tokens[mover])).json
    assert (now["version"], now["turn"]) == (state["version"] + 2, mover)


def test_a_remembered_move_body_loads_alike_and_each_caller_gets_its_own_copy(app):
    body = {"action": "play", "tile": "3-S", "end": "e7", "expose": 5}
    loads = []
    for _ in range(2):
        with app.test_request_context(json=body):
            loads.append(load_body(MoveIn()))
    assert loads[0] == loads[1] == body
    for loaded in loads:  # the first load and the remembered one: neither is shared
        loaded["tile"] = "0-0"
    with app.test_request_context(json=body):
        assert load_body(MoveIn()) == body
    with app.test_request_context(json={**body, "expose": 12}), \
            pytest.raises(problems.Problem) as refused:
        load_body(MoveIn())
    assert refused.value.status == 400
