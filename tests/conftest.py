"""Shared fixtures. Redis: one real redis-server per session, or the one named by
TEST_REDIS_URL (not REDIS_URL: the tests flush it, and an operator's shell may name a real one)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import redis

from service.entry.redis_server import RedisServer


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Yield the URL of a real Redis: $TEST_REDIS_URL if set, else a redis-server started here
    (without AOF, for speed: the durability tests start servers of their own)."""
    external = os.environ.get("TEST_REDIS_URL")
    if external:
        yield external
        return
    with RedisServer(tmp_path_factory.mktemp("redis"), appendonly=False) as server:
        yield server.url


@pytest.fixture(scope="session")
def redis_url(redis_server: str) -> str:
    """The URL of the test Redis (the name the API tests use)."""
    return redis_server


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    """Yield a client of the test Redis, its database flushed first."""
    with redis.Redis.from_url(redis_url) as client:
        client.flushdb()
        yield client
