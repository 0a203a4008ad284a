"""Runs an rq worker for AI turns, in-process (no fork per job) for fast replies."""

from __future__ import annotations

import logging
import math
import time

import redis
from rq import SimpleWorker

from service.adapters import logs
from service.adapters.bootstrap import connect
from service.adapters.settings import Settings
from service.adapters.turn_queue import RqTurnQueue

log = logging.getLogger("spinner.worker")
READY_POLL_S = 0.5


class TurnWorker(SimpleWorker):
    """rq's in-process worker, whose maintenance runs every `every_s` seconds (rq's default:
    ten minutes) and then also sweeps the queue for lost AI turns.

    rq's maintenance starts its scheduler process again if it died (it dies on a Redis error,
    and jobs due for retry wait on it); the worker waits for a job at most `every_s` at a
    time, so that an idle worker's maintenance runs too.
    """

    max_connection_wait_time = 2.0  # back off at most this long while Redis is down (rq: 60)

    def __init__(self, turns: RqTurnQueue, every_s: float) -> None:
        super().__init__([turns.queue], connection=turns.connection, maintenance_interval=every_s)
        self.turns = turns

    @property
    def dequeue_timeout(self) -> int:
        """Seconds the worker blocks waiting for a job before its maintenance may run."""
        return max(1, math.ceil(self.maintenance_interval))

    def run_maintenance_tasks(self) -> None:
        """Run rq's maintenance, then queue again the AI turns whose job is lost."""
        super().run_maintenance_tasks()
        try:
            requeued = self.turns.sweep()
        except redis.RedisError as error:  # Redis is down or loading: the next sweep retries
            log.warning("could not sweep for lost AI turns: %r", error)
        else:
            if requeued:
                log.warning("queued %d lost AI turn(s) again", requeued)


def work(settings: Settings) -> None:
    """Work the AI turn queue until the worker is told to stop."""
    logs.configure()
    connection = connect(settings.queue_redis_url or settings.redis_url)
    wait_for_redis(connection)
    turns = RqTurnQueue(connection, settings)
    TurnWorker(turns, settings.ai_sweep_every_s).work(with_scheduler=True)


def wait_for_redis(connection: redis.Redis) -> None:
    """Return once Redis answers with its data loaded: a worker started while it is down or
    still loading would die at once, and be started again, and again, slowing the load."""
    while True:
        try:
            if not connection.info("persistence")["loading"]:
                return
        except redis.ConnectionError:  # down: `spinner serve` is starting it again
            pass
        time.sleep(READY_POLL_S)
