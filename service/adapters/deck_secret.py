"""The server secret that seeded decks are derived from (usecases.decks): DECK_SECRET, else
one made at random once and kept in the store's Redis, so that every API process and worker
deals alike and a restart changes nothing."""

from __future__ import annotations

import secrets
from typing import Final

import redis
from redis.cluster import RedisCluster

from service.adapters.redis_store import reachable

SECRET_KEY: Final = "spinner:deck-secret"


class DeckSecret:
    """Gives the secret, read from Redis when first needed (a seeded game's first deal)."""

    def __init__(self, client: redis.Redis | RedisCluster, configured: str = "") -> None:
        self._client = client
        self._value = configured.encode() or None

    def __call__(self) -> bytes:
        """Return the secret (StoreUnavailable while Redis cannot give it)."""
        if self._value is None:
            self._value = self._kept()  # processes racing here all read the one SET NX kept
        return self._value

    @reachable
    def _kept(self) -> bytes:
        """The secret kept in Redis, made there now if none is (SET NX: the first one wins)."""
        mine = secrets.token_hex(32)
        self._client.set(SECRET_KEY, mine, nx=True)
        kept = self._client.get(SECRET_KEY) or mine
        return kept.encode() if isinstance(kept, str) else kept
