"""R25 everywhere: full games over HTTP, every answer searched for tiles the caller may not see."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from service.game.state import GameState, replay
from tests.api.driver import auth, create, play_to_end

TILE = re.compile(r"^[0-9S]-[0-9S]$")


def tiles_in(value: Any) -> set[str]:
    """Every tile string anywhere in a JSON value."""
    if isinstance(value, str):
        return {value} if TILE.match(value) else set()
    if isinstance(value, dict):
        return set().union(*map(tiles_in, value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*map(tiles_in, value)) if value else set()
    return set()


def visible_in_state(truth: GameState, seat: int | None) -> set[str]:
    """What a seat may see of the true state: its own hand, the table, the hand's d-d (R7)."""
    hand = truth.hand
    if hand is None:
        return set()
    table = {t.text for t, _, _ in hand.layout} | {hand.opening_double.text}
    return table | ({t.text for t in hand.tiles[seat]} if seat is not None else set())


def visible_in_event(true_event: dict[str, Any], seat: int | None) -> set[str]:
    """What a seat may see of one true event before the match ends."""
    kind, data = true_event["type"], true_event["data"]
    if kind == "hand_started":
        own = set(data["hands"][seat]) if seat is not None else set()
        return own | {data["opening_double"]}
    if kind == "tile_drawn":
        return {data["tile"]} if true_event["seat"] == seat else set()
    return tiles_in(data)


class Observer:
    """Records what every seat and a spectator are told while a game is played."""

    def __init__(self, client: Any, game_id: str, tokens: dict[int, str]) -> None:
        self.client, self.game_id, self.tokens = client, game_id, tokens
        self.states: list[tuple[int | None, dict[str, Any]]] = []
        self.logs: list[tuple[int | None, list[dict[str, Any]]]] = []

    def look(self, everything: bool) -> dict[int | None, dict[str, Any]]:
        """Fetch the state as each seat and a spectator (with `everything`, logs too)."""
        base, current = f"/v1/games/{self.game_id}", {}
        for seat in [None, *self.tokens]:
            headers = auth(self.tokens[seat]) if seat is not None else {}
            state = current[seat] = self.client.get(base, headers=headers).json
            self.states.append((seat, state))
            if everything and state["status"] == "playing":
                after = max(0, state["version"] - 12)
                self.logs.append((seat, self.client.get(f"{base}/events?after={after}",
                                                        headers=headers).json["events"]))
                old = self.client.get(f"{base}/state?version={max(1, state['version'] - 3)}",
                                      headers=headers).json
                self.states.append((seat, old))
        return current

    def check(self, export: list[dict[str, Any]]) -> int:
        """Assert no answer showed a hidden tile; return how many answers were searched."""
        for seat, state in self.states:
            truth = replay(export[:state["version"]])
            leaked = tiles_in(state) - visible_in_state(truth, seat)
            assert not leaked, f"seat {seat} saw {leaked} at version {state['version']}"
        for seat, log in self.logs:
            for event in log:
                assert "hash" not in event
                leaked = tiles_in(event) - visible_in_event(export[event["seq"] - 1], seat)
                assert not leaked, f"seat {seat} saw {leaked} in event {event['seq']}"
        return len(self.states) + len(self.logs)


@pytest.mark.parametrize(("seats", "opening", "hands"), [
    (2, "draw", 2), (3, "next_lower", 2), (4, "draw", 2), (8, "next_lower", 2),
])
def test_R25_no_answer_shows_a_tile_the_caller_may_not_see(client, seats, opening, hands):
    game_id, tokens = create(client, seats=seats, hands=hands, opening=opening, seed=seats)
    observer, rng, moves = Observer(client, game_id, tokens), random.Random(seats), 0
    seen = observer.look(everything=True)
    while seen[None]["status"] == "playing":
        seat = seen[None]["turn"]
        answer = client.post(f"/v1/games/{game_id}/moves",
                             json=rng.choice(seen[seat]["legal_moves"]), headers=auth(tokens[seat]))
        assert answer.status_code == 200
        observer.states.append((seat, answer.json))
        moves += 1
        seen = observer.look(everything=moves % 7 == 0)
    export = client.get(f"/v1/games/{game_id}/export").json["events"]
    assert observer.check(export) > moves


def test_R25_the_log_is_complete_for_everyone_once_the_match_has_ended(client):
    game_id, tokens = create(client, seats=2, hands=1, seed=3)
    play_to_end(client, game_id, tokens, random.Random(3))
    export = client.get(f"/v1/games/{game_id}/export").json["events"]
    public = client.get(f"/v1/games/{game_id}/events").json["events"]
    assert public == export
    assert "deck" in export[1]["data"]


def test_R25_games_at_the_same_version_each_answer_their_own_table_and_hand(client, services):
    made: dict[tuple[str, int], tuple[str, list[str], str]] = {}
    for attempt in range(200):  # decks are random: deal until Ann's and Bob's versions meet
        name = ("Ann", "Bob")[attempt % 2]
        body = {"players": [{"name": f"{name}{s}", "kind": "human"} for s in range(3)]}
        created = client.post("/v1/games", json=body).json
        version = created["version"]
        made[name, version] = (created["game_id"], [s["token"] for s in created["seats"]], name)
        if ("Ann", version) in made and ("Bob", version) in made:
            break
    games = [made["Ann", version], made["Bob", version]]  # other names and tokens
    assert len({services.store.version(game_id) for game_id, _, _ in games}) == 1
    for game_id, tokens, name in games + games:  # twice: the second answers are cached
        state = replay(services.store.read(game_id))
        for seat in (0, 1, None):
            answer = client.get(f"/v1/games/{game_id}",
                                headers=auth(tokens[seat]) if seat is not None else {}).json
            assert [p["name"] for p in answer["players"]] == [f"{name}{s}" for s in range(3)]
            assert answer.get("hand") == \
                (None if seat is None else [t.text for t in state.hand.tiles[seat]])


def test_R25_answers_that_depend_on_the_token_vary_by_it(client):
    game_id, tokens = create(client, seats=2, hands=1, seed=3)
    paths = ["", "/state?version=2", "/events", "/stream?after=99"]
    for path in paths:
        for headers in (auth(tokens[0]), {}):
            answer = client.get(f"/v1/games/{game_id}{path}", headers=headers)
            assert answer.status_code == 200, path
            assert "Authorization" in answer.vary, path
            answer.close()
    assert "Authorization" not in client.get("/healthz").vary
