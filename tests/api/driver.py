"""Drives games over HTTP: create one, then play every seat's legal moves until it ends."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

Answer = Any  # a Flask test response


def auth(token: str) -> dict[str, str]:
    """Return the Authorization header for a seat token."""
    return {"Authorization": f"Bearer {token}"}


def create(client: Any, seats: int = 2, hands: int = 1, opening: str = "draw",
           seed: int | None = 1, ai: dict[int, str] | None = None,
           rules: dict[str, Any] | None = None) -> tuple[str, dict[int, str]]:
    """Create a game (humans unless `ai` maps seat -> level) of Spinner with `hands` and
    `opening`, or under `rules` when given; return its id and seat tokens."""
    ai = ai or {}
    players = [{"name": f"P{s}", "kind": "ai", "level": ai[s]} if s in ai
               else {"name": f"P{s}", "kind": "human"} for s in range(seats)]
    body: dict[str, Any] = {"players": players,
                            "rules": rules or {"hands": hands, "opening": opening}}
    if seed is not None:
        body["seed"] = seed
    answer = client.post("/v1/games", json=body)
    assert answer.status_code == 201, answer.json
    tokens = {s["seat"]: s["token"] for s in answer.json["seats"] if "token" in s}
    return answer.json["game_id"], tokens


def play_to_end(client: Any, game_id: str, tokens: dict[int, str], rng: random.Random,
                seen: Callable[[int | None, Answer], None] | None = None) -> dict[str, Any]:
    """Play random legal moves for every seat until the match ends; return the final state."""
    state = client.get(f"/v1/games/{game_id}").json
    while state["status"] == "playing":
        seat = state["turn"]
        mine = client.get(f"/v1/games/{game_id}", headers=auth(tokens[seat]))
        move = rng.choice(mine.json["legal_moves"])
        answer = client.post(f"/v1/games/{game_id}/moves", json=move, headers=auth(tokens[seat]))
        assert answer.status_code == 200, answer.json
        if seen is not None:
            seen(seat, mine)
            seen(seat, answer)
        state = answer.json
    return state
