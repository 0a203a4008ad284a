"""Games played to their end through the use cases over a real Redis store, and the bytes their
keys take there: shared by the compaction test and `bench.storage`."""

from __future__ import annotations

import random
from typing import Any

import redis

from service.adapters.bootstrap import utc_now
from service.adapters.redis_store import RedisEventStore, game_key
from service.usecases.games import Games

HUMANS = [{"name": "Ann", "kind": "human"}, {"name": "Bob", "kind": "human"}]
TEN_HANDS = {"hands": 10, "opening": "draw"}


class NoQueue:
    """A turn queue for games of human seats only: no AI turn is ever due."""

    def enqueue_turn(self, game_id: str, version: int) -> None:
        """Queue nothing."""

    def heal_turn(self, game_id: str, version: int) -> None:
        """Heal nothing."""


def games_over(store: RedisEventStore) -> Games:
    """Return the use cases over `store`, with no AI queue and the real clock."""
    return Games(store, NoQueue(), utc_now)


def create(games: Games, seed: int, rules: dict[str, Any] | None = None) -> str:
    """Create a two-human game (ten hands unless `rules` says otherwise); return its id."""
    return games.create(HUMANS, rules or TEN_HANDS, seed).game_id


def play_to_end(games: Games, game_id: str, rng: random.Random) -> int:
    """Make random legal moves for the seat to move until the match ends; return the version."""
    while True:
        table = games.current_view(game_id, None).table
        if table.fields["status"] != "playing":
            return table.version
        seat = table.fields["turn"]
        legal = games.current_view(game_id, seat).own["legal_moves"]
        games.move(game_id, seat, rng.choice(legal), None, None)


def footprint(client: redis.Redis, game_id: str) -> int:
    """Return the bytes Redis uses for the game's keys (MEMORY USAGE, every element counted)."""
    keys = client.keys(game_key(game_id, "*"))
    return sum(client.memory_usage(key, samples=0) or 0 for key in keys)
