"""The redis-server child process: found, started, durable across a crash (AOF, fsync always)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import redis

from service.adapters.redis_store import RedisEventStore
from service.entrypoints.redis_server import RedisServer, find_redis_server


def event(seq: int) -> dict[str, object]:
    """Return a recorded event numbered `seq`."""
    return {"seq": seq, "type": "passed", "at": "2024-05-01T12:00:00Z", "seat": 0,
            "data": {}, "hash": f"{seq:064x}"}


def test_find_redis_server_returns_an_executable() -> None:
    path = find_redis_server()
    assert Path(path).is_file() and os.access(path, os.X_OK)


def test_the_data_survives_a_sigkill(tmp_path: Path) -> None:
    with RedisServer(tmp_path) as first:
        store = RedisEventStore(redis.Redis.from_url(first.url))
        with store.client:
            store.create("g1", [event(1)], {"seat0": "h0"})
            store.append("g1", 1, [event(2), event(3)], snapshot={"version": 2, "state": {}})
            assert store.client.config_get("appendfsync") == {"appendfsync": "always"}
            policy = store.client.config_get("maxmemory-policy")
            assert policy == {"maxmemory-policy": "noeviction"}  # full: no game is evicted
        first.kill()
        assert first.pid is not None
        with pytest.raises(ProcessLookupError):
            os.kill(first.pid, 0)
    with RedisServer(tmp_path) as second:
        store = RedisEventStore(redis.Redis.from_url(second.url))
        with store.client:
            assert store.read("g1") == [event(1), event(2), event(3)]
            assert store.meta("g1") == {"seat0": "h0"}
            assert store.load("g1") == ({"version": 2, "state": {}}, [event(3)])
    assert "Ready to accept connections" in (tmp_path / "redis.log").read_text()


def test_a_server_that_cannot_start_raises(tmp_path: Path) -> None:
    with RedisServer(tmp_path / "a") as running:
        clash = RedisServer(tmp_path / "b", port=running.port)
        with pytest.raises(RuntimeError, match="did not start"):
            clash.start()
        store = RedisEventStore(redis.Redis.from_url(running.url))
        with store.client:
            assert store.ping()


def test_start_returns_only_once_the_data_is_loaded(tmp_path: Path) -> None:
    """Redis answers INFO while it replays its append-only file, and LOADING to anything else:
    a worker started then would die (seen on a restart with a 35 MB file)."""
    with RedisServer(tmp_path) as first, redis.Redis(port=first.port) as client:
        client.sadd("big", *range(100))
        for _ in range(30):  # replayed one by one: seconds of loading, and every 1,000
            with client.pipeline(transaction=False) as batch:  # commands Redis answers INFO
                for _ in range(10_000):
                    batch.sunionstore("copy", ["big"])
                batch.execute()
    with RedisServer(tmp_path) as second, redis.Redis(port=second.port) as client:
        assert client.info("persistence")["loading"] == 0
        assert client.scard("copy") == 100
