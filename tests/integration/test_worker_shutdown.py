"""A worker told to stop stops at once: rq leaves its command channel, then stops the thread
that listens on it, and redis-py 8's `stop` waits for that thread. When the channel's goodbye
wakes the thread before it is told to stop, it goes back to sleep for as long as it was set
to (rq: 60 s), and `spinner serve` or the test around it kills the worker first (SIGKILL)."""

from __future__ import annotations

import threading

import redis

from service.adapters.bootstrap import connect
from service.adapters.settings import Settings
from service.adapters.turn_queue import RqTurnQueue
from tests.workers import wait_until
from workers.runner import COMMANDS_WAKE_S, TurnWorker


def test_the_command_listener_stops_soon_though_the_goodbye_woke_it_first(
        redis_url: str, redis_client: redis.Redis) -> None:
    settings = Settings(redis_url=redis_url)
    worker = TurnWorker(RqTurnQueue(connect(redis_url), settings), settings.ai_sweep_every_s)
    worker.subscribe()
    assert wait_until(lambda: worker.pubsub.subscribed, 5)
    worker.pubsub.unsubscribe()  # the race's losing order: the goodbye reaches the thread...
    assert wait_until(lambda: not worker.pubsub.subscribed, 5)  # ...which has handled it
    stopped = threading.Event()
    threading.Thread(target=lambda: (worker.unsubscribe(), stopped.set()), daemon=True).start()
    assert stopped.wait(COMMANDS_WAKE_S + 9)  # rq's own thread would sleep out 60 s here
    assert not worker.pubsub_thread.is_alive()
