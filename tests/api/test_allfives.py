"""All Fives over HTTP (issue 22; ALLFIVES.md F1-F16): creation and its 400s, a whole match
between two humans with every answer searched for tiles the caller may not see (R25), the
log, the stream, past states, the export that `spinner verify` checks, refused moves naming
their F-rule, a turn clock and leaving. Every answer is checked against openapi.yaml."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from service.entrypoints.cli import main as spinner
from service.game.variants import replay_log
from tests.api.contract import assert_fits_stream
from tests.api.driver import auth, create, play_to_end
from tests.api.test_hidden_information import tiles_in
from tests.api.test_stream import Listener

FIVES = {"variant": "all_fives", "target": 50}
HUMAN = {"name": "Ann", "kind": "human"}


def create_fives(client: Any, seats: int = 2, seed: int = 1,
                 **rules: Any) -> tuple[str, dict[int, str]]:
    """Create an All Fives game of human seats to 50 (or under `rules`' changes)."""
    return create(client, seats=seats, seed=seed, rules={**FIVES, **rules})


def as_seat(client: Any, game_id: str, tokens: dict[int, str], seat: int) -> dict[str, Any]:
    """The game's state as `seat` sees it."""
    state: dict[str, Any] = client.get(f"/v1/games/{game_id}", headers=auth(tokens[seat])).json
    return state


def test_F3_F4_F16_a_game_shows_its_rules_the_leader_drawn_and_its_first_hand(client):
    game_id, tokens = create_fives(client, seats=3)
    state = client.get(f"/v1/games/{game_id}").json
    assert state["rules"] == FIVES
    assert state["opening_double"] is None and state["obligations"] == []
    assert [p["tile_count"] for p in state["players"]] == [5, 5, 5]  # F3
    assert state["boneyard_count"] == 28 - 15 and state["hand_number"] == 1
    events = client.get(f"/v1/games/{game_id}/events").json["events"]
    assert [e["type"] for e in events] == ["game_created", "leader_drawn", "hand_started"]
    drawn = [sorted(map(int, t.split("-"))) for t in events[1]["data"]["tiles"]]
    leader = max(range(3), key=lambda s: (sum(drawn[s]), drawn[s][1]))  # F4
    assert events[2]["data"]["leader"] == leader == state["turn"]
    drawn_only = client.get(f"/v1/games/{game_id}/state?version=2").json  # before the deal
    assert drawn_only["hand_number"] is None and drawn_only["turn"] is None
    mine = as_seat(client, game_id, tokens, leader)
    assert {m["tile"] for m in mine["legal_moves"]} == set(mine["hand"])  # F6: any tile
    assert all(m["end"] is None and m["expose"] is None for m in mine["legal_moves"])
    default = create(client, rules={"variant": "all_fives"})[0]
    assert client.get(f"/v1/games/{default}").json["rules"] == {
        "variant": "all_fives", "target": 150}


@pytest.mark.parametrize(("body", "field"), [
    ({"rules": {"variant": "all_fives", "hands": 3}}, "rules.hands"),  # F16
    ({"rules": {"variant": "all_fives", "opening": "draw"}}, "rules.opening"),
    ({"rules": {"target": 150}}, "rules.target"),  # Spinner by default
    ({"rules": {"variant": "spinner", "target": 150}}, "rules.target"),
    ({"rules": {"variant": "all_fives", "target": 45}}, "rules.target"),  # F15
    ({"rules": {"variant": "all_fives", "target": 505}}, "rules.target"),
    ({"rules": {"variant": "all_fives", "target": 52}}, "rules.target"),
    ({"rules": {"variant": "all_fives", "target": "150"}}, "rules.target"),
    ({"rules": {"variant": "draw"}}, "rules.variant"),
    ({"rules": {"variant": "all_fives"}, "players": [HUMAN] * 5}, "players"),  # F2
])
def test_F2_F15_F16_a_creation_with_another_variants_option_is_400_naming_it(
        client, body, field):
    answer = client.post("/v1/games", json={"players": [HUMAN, HUMAN], **body})
    assert answer.status_code == 400, answer.json
    assert [e["field"] for e in answer.json["errors"]] == [field]


def visible_in_event(true_event: dict[str, Any], seat: int | None) -> set[str]:
    """What a seat may see of one true All Fives event before the match ends (R25)."""
    kind, data = true_event["type"], true_event["data"]
    if kind == "hand_started":
        return set(data["hands"][seat]) if seat is not None else set()
    if kind == "tile_drawn":
        return {data["tile"]} if true_event["seat"] == seat else set()
    return tiles_in(data)


def hidden_shown(states: list[tuple[int, dict[str, Any]]],
                 logs: list[tuple[int | None, list[dict[str, Any]]]],
                 export: list[dict[str, Any]]) -> set[str]:
    """Every tile an answer showed that its caller may not see: in a state, anything but
    its own hand and the table; in a log, anything its true event hides (R25)."""
    leaked: set[str] = set()
    for seat, state in states:
        hand = replay_log(export[:state["version"]]).hand
        assert hand is not None
        seen = {t.text for t, _, _ in hand.layout} | {t.text for t in hand.tiles[seat]}
        leaked |= tiles_in(state) - seen
    for caller, log in logs:
        for event in log:
            leaked |= tiles_in(event) - visible_in_event(export[event["seq"] - 1], caller)
    return leaked


def test_F9_F16_R25_a_whole_match_to_its_target_hides_every_tile_and_verifies(
        app, client, tmp_path):
    game_id, tokens = create_fives(client, seed=5)
    base = f"/v1/games/{game_id}"
    listener = Listener(app, f"{base}/stream", auth(tokens[0]))
    states: list[tuple[int, dict[str, Any]]] = []
    logs: list[tuple[int | None, list[dict[str, Any]]]] = []

    def seen(seat: int | None, answer: Any) -> None:
        assert seat is not None
        states.append((seat, answer.json))  # a seat's state, then its move's answer
        if len(states) % 6 == 0 and answer.json["status"] == "playing":  # after a move
            for caller in (seat, 1 - seat, None):
                headers = auth(tokens[caller]) if caller is not None else {}
                logs.append((caller, client.get(f"{base}/events", headers=headers).json[
                    "events"]))

    final = play_to_end(client, game_id, tokens, random.Random(5), seen)
    export = client.get(f"{base}/export").json["events"]
    assert not hidden_shown(states, logs, export)
    assert len(states) >= 10 and logs
    totals = [p["total"] for p in final["players"]]
    assert final["winners"] == [totals.index(max(totals))] and max(totals) >= 50 > min(totals)
    assert export[-1]["data"] == {"totals": totals, "winners": final["winners"]}
    plays = [e for e in export if e["type"] == "tile_played"]
    assert all(e["data"]["points"] % 5 == 0 for e in plays) and any(
        e["data"]["points"] for e in plays)  # F10
    ended = [e["data"] for e in export if e["type"] == "hand_ended"]
    assert [s["points"] for s in final["scores"]] == [d["points"] for d in ended]
    for seat in (0, 1):  # each total is its plays' points and its hands' ends' (F10, F12)
        assert totals[seat] == sum(e["data"]["points"] for e in plays if e["seat"] == seat) \
            + sum(d["points"][seat] for d in ended)
    for seat, state in states[::11]:  # a past state is what was answered then (R26)
        past = client.get(f"{base}/state?version={state['version']}",
                          headers=auth(tokens[seat]))
        assert past.json == state
    assert listener.done.wait(20)
    frames = [f for f in assert_fits_stream(listener.text) if f["event"] != "turn"]
    assert [f["event"] for f in frames] == [e["type"] for e in export]
    dealt = [json.loads(f["data"])["data"] for f in frames if f["event"] == "hand_started"]
    assert all(d.get("hands", [None, None])[1] is None for d in dealt[:-1])  # seat 0's only
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"game_id": game_id, "events": export}))
    assert spinner(["verify", str(path)]) == 0


def test_F1_F2_F6_F7_F8_refused_moves_name_their_rule(client):
    game_id, tokens = create_fives(client, seed=7)
    base = f"/v1/games/{game_id}/moves"
    leader = client.get(f"/v1/games/{game_id}").json["turn"]
    other = 1 - leader
    out_of_turn = client.post(base, json={"action": "draw"}, headers=auth(tokens[other]))
    assert out_of_turn.status_code == 409 and out_of_turn.json["rule"] == "F2"
    before_lead = client.post(base, json={"action": "draw"}, headers=auth(tokens[leader]))
    assert before_lead.status_code == 422 and before_lead.json["rule"] == "F6"
    assert before_lead.json["legal_moves"] == as_seat(client, game_id, tokens, leader)[
        "legal_moves"]
    no_such_tile = client.post(base, json={"action": "play", "tile": "6-7"},
                               headers=auth(tokens[leader]))
    # well spelled (R2), so it fits the schema: a move the rules forbid (F1), not a 400
    assert no_such_tile.status_code == 422 and no_such_tile.json["rule"] == "F1"
    assert no_such_tile.json["legal_moves"] == as_seat(client, game_id, tokens, leader)[
        "legal_moves"]
    assert "F1" in no_such_tile.json["detail"]
    lead = as_seat(client, game_id, tokens, leader)["legal_moves"][0]
    assert client.post(base, json=lead, headers=auth(tokens[leader])).status_code == 200
    mine = as_seat(client, game_id, tokens, other)
    ends = {e["id"]: e["value"] for e in client.get(f"/v1/games/{game_id}").json["layout"][
        "ends"]}
    end, value = next(iter(ends.items()))
    misfit = next(t for t in mine["hand"] if str(value) not in t.split("-"))
    refused = client.post(base, json={"action": "play", "tile": misfit, "end": end},
                          headers=auth(tokens[other]))
    assert refused.status_code == 422 and refused.json["rule"] == "F7"
    nowhere = client.post(base, json={"action": "play", "tile": misfit, "end": "e9"},
                          headers=auth(tokens[other]))
    assert nowhere.status_code == 422 and nowhere.json["rule"] == "F8"


def test_a_clock_runs_and_a_seat_leaves_an_all_fives_match(client):
    game_id, tokens = create_fives(client, seed=8, turn_seconds=60)
    state = client.get(f"/v1/games/{game_id}").json
    assert state["rules"] == {**FIVES, "turn_seconds": 60, "timeouts_to_leave": 3}
    assert state["turn_deadline"] is not None
    left = client.post(f"/v1/games/{game_id}/leave", json={"replace_with": "greedy"},
                       headers=auth(tokens[1]))
    assert left.status_code == 200, left.json
    assert left.json["players"][1] == {**left.json["players"][1], "kind": "ai",
                                       "level": "greedy"}
    assert left.json["legal_moves"] == []
    events = client.get(f"/v1/games/{game_id}/events").json["events"]
    assert events[-1]["type"] == "seat_left" and events[-1]["seat"] == 1
