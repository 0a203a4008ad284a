"""The event store port and its adapters: Redis (Lua append) and in-memory."""

from service.store.errors import (
    ConcurrencyError,
    StoreError,
    StoreUnavailable,
)
from service.store.memory import InMemoryEventStore
from service.store.protocol import EventStore
from service.store.redis_store import RedisEventStore
from service.store.server import RedisServer, find_redis_server

__all__ = [
    "ConcurrencyError",
    "EventStore",
    "InMemoryEventStore",
    "RedisEventStore",
    "RedisServer",
    "StoreError",
    "StoreUnavailable",
    "find_redis_server",
]
