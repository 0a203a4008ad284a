"""Snapshots on a real Redis: a load replays at most the current hand, and replays it right."""

from __future__ import annotations

import random
from typing import Any

import pytest

from service.adapters.bootstrap import Services, build
from service.adapters.settings import Settings
from service.game import events as ev
from service.game.state import GameState, replay
from service.usecases.loading import load

HANDS = 3


@pytest.fixture
def services(redis_url: str, redis_client: Any) -> Services:
    """The real services over a flushed Redis database."""
    return build(Settings(redis_url=redis_url))


def two_humans(services: Services, opening: str, seed: int) -> str:
    """Create a two-human game of HANDS hands; return its id."""
    players = [{"name": "P0", "kind": "human"}, {"name": "P1", "kind": "human"}]
    return services.games.create(players, {"hands": HANDS, "opening": opening}, seed).game_id


def play_one_move(services: Services, game_id: str, rng: random.Random) -> None:
    """Play a random legal move for the seat to move."""
    seat = services.games.current_view(game_id, None).table.fields["turn"]
    legal = services.games.current_view(game_id, seat).own["legal_moves"]
    services.games.move(game_id, seat, rng.choice(legal), None, None)


def from_snapshot(snapshot: dict[str, Any] | None, tail: list[ev.Event]) -> GameState:
    """Rebuild the state as the service does: the snapshot, then the events after it."""
    return replay(tail, GameState.from_dict(snapshot["state"]) if snapshot else GameState())


@pytest.mark.parametrize(("opening", "seed"), [("draw", 5), ("next_lower", 6)])
def test_after_hand_1_a_load_returns_a_snapshot_and_only_the_current_hands_events(
        services: Services, opening: str, seed: int) -> None:
    game_id = two_humans(services, opening, seed)
    rng = random.Random(seed)
    loads_checked = set()
    while load(services.games.ctx, game_id).status == "playing":
        play_one_move(services, game_id, rng)
        full_log = services.store.read(game_id)
        full = replay(full_log)
        snapshot, tail = services.store.load(game_id)
        assert from_snapshot(snapshot, tail).to_dict() == full.to_dict()
        if full.hand is None or full.hand.number == 1 or full.status == "finished":
            continue  # a finished game's log is compacted: loaded whole, no snapshot
        assert snapshot is not None
        hand_started = full_log[full.hand_seq - 1]
        assert hand_started["type"] == ev.HAND_STARTED
        assert hand_started["data"]["hand_number"] == full.hand.number
        assert snapshot["state"]["hand_seq"] == full.hand_seq  # this hand's, not an older one
        assert all(event["seq"] > full.hand_seq for event in tail)
        assert [e["seq"] for e in tail] == list(range(snapshot["version"] + 1, full.version + 1))
        loads_checked.add(full.hand.number)
    assert loads_checked == set(range(2, HANDS + 1))
    rebuilt = replay(services.store.read(game_id))
    assert load(services.games.ctx, game_id).to_dict() == rebuilt.to_dict()
