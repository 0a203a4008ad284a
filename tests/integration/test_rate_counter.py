"""The rate limits' counter over a real Redis."""

from __future__ import annotations

import time

import redis

from service.adapters.rate_counter import RedisRateCounter
from service.adapters.redis_store import RedisEventStore


def test_incr_window_counts_hits_per_key_within_a_window(redis_client: redis.Redis) -> None:
    counter = RedisRateCounter(RedisEventStore(redis_client))
    assert [counter.incr_window("rl:a", 60) for _ in range(3)] == [1, 2, 3]
    assert counter.incr_window("rl:b", 60) == 1
    counter.incr_window("rl:c", 1)
    time.sleep(1.2)
    assert counter.incr_window("rl:c", 1) == 1


def test_the_counter_survives_a_server_that_forgot_its_script(redis_client: redis.Redis) -> None:
    counter = RedisRateCounter(RedisEventStore(redis_client))
    assert counter.incr_window("rl:a", 60) == 1
    redis_client.script_flush()  # as after a restart
    assert counter.incr_window("rl:a", 60) == 2
