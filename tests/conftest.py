"""Shared fixtures. Redis: one real redis-server per session, or the one named by
TEST_REDIS_URL (not REDIS_URL: the tests flush it, and an operator's shell may name a real one)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from service.entrypoints.redis_server import RedisServer

MARKS = {"unit": pytest.mark.unit, "api": pytest.mark.redis, "integration": pytest.mark.redis,
         "browser": pytest.mark.redis}
"""The marker of each test folder: `unit` runs no server, `redis` needs the real one."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test by its folder (MARKS), so that `-m` can pick the quick ones."""
    here = Path(__file__).parent
    for item in items:
        folder = item.path.relative_to(here).parts[0] if item.path.is_relative_to(here) else ""
        if folder in MARKS:
            item.add_marker(MARKS[folder])


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
