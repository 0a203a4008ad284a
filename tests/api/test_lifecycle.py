"""Turn clock options and leaving over HTTP (API.md "Lifecycle"), every answer checked
against openapi.yaml."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.driver import auth

HUMANS = [{"name": "Ann", "kind": "human"}, {"name": "Bea", "kind": "human"}]


def create(client: Any, rules: dict[str, Any]) -> Any:
    """POST a two-human game with `rules`; return the answer."""
    return client.post("/v1/games", json={"players": HUMANS, "rules": rules, "seed": 3})


@pytest.mark.parametrize(("field", "value"), [
    ("turn_seconds", 9), ("turn_seconds", 604801), ("turn_seconds", "60"),
    ("turn_seconds", 10.5), ("timeouts_to_leave", 0), ("timeouts_to_leave", 11),
])
def test_a_clock_option_out_of_range_is_400_naming_its_field(client: Any, field: str,
                                                              value: Any) -> None:
    answer = create(client, {"hands": 1, "turn_seconds": 60, field: value})
    assert answer.status_code == 400
    assert [e["field"] for e in answer.json["errors"]] == [f"rules.{field}"]


def test_a_clocked_game_shows_its_rules_and_its_turn_deadline(client: Any) -> None:
    created = create(client, {"hands": 1, "turn_seconds": 10})
    assert created.status_code == 201
    state = client.get(created.headers["Location"]).json
    assert state["rules"] == {"variant": "spinner", "hands": 1, "opening": "draw",
                              "turn_seconds": 10, "timeouts_to_leave": 3}
    assert state["turn_deadline"] is not None and state["turn_deadline"].endswith("Z")
    assert client.get(create(client, {"hands": 1}).headers["Location"]).json[
        "turn_deadline"] is None
    assert create(client, {"turn_seconds": 604800, "timeouts_to_leave": 10}).status_code == 201


def test_leaving_hands_the_seat_to_an_ai_and_its_token_reads_but_cannot_move(
        client: Any) -> None:
    created = create(client, {"hands": 1})
    game, token = created.headers["Location"], created.json["seats"][1]["token"]
    bad = client.post(f"{game}/leave", json={"replace_with": "master"}, headers=auth(token))
    assert bad.status_code == 400 and bad.json["errors"][0]["field"] == "replace_with"
    assert client.post(f"{game}/leave", json={}, headers=auth(token)).status_code == 400
    assert client.post(f"{game}/leave", json={"replace_with": "greedy"}).status_code == 401
    left = client.post(f"{game}/leave", json={"replace_with": "greedy"}, headers=auth(token))
    assert left.status_code == 200
    assert left.json["players"][1] | {"tile_count": 0} == {
        "seat": 1, "name": "Bea", "kind": "ai", "level": "greedy", "tile_count": 0, "total": 0}
    mine = client.get(game, headers=auth(token)).json
    assert mine["hand"] and mine["legal_moves"] == []
    again = client.post(f"{game}/leave", json={"replace_with": "random"}, headers=auth(token))
    assert (again.status_code, again.json["type"]) == (409, "/problems/seat-left")
    move = client.post(f"{game}/moves", json={"action": "draw"}, headers=auth(token))
    assert (move.status_code, move.json["type"]) == (409, "/problems/seat-left")
    log = client.get(f"{game}/events").json["events"]
    assert log[-1] | {"at": "", "seq": 0} == {"seq": 0, "type": "seat_left", "at": "",
                                              "seat": 1, "data": {"level": "greedy"}}


def test_metrics_count_the_clocks_waiting_for_their_deadline(client: Any) -> None:
    def pending() -> float:
        text = client.get("/metrics").get_data(as_text=True)
        return float(next(line.split()[1] for line in text.splitlines()
                          if line.startswith("spinner_turn_clocks_pending ")))
    before = pending()
    create(client, {"hands": 1, "turn_seconds": 60})
    create(client, {"hands": 1})
    assert pending() == before + 1
