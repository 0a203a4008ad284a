"""rq's scheduler (which queues retries and turn clocks at their time) runs in one worker for
each queue: `spinner serve`'s fast-lane worker finds its one queue served by another
worker's scheduler, and must neither start a second nor warn, every sweep, that it died; it
starts one when none serves its queues."""

from __future__ import annotations

import logging

import pytest
import redis
from rq.scheduler import RQScheduler

from service.adapters.bootstrap import connect
from service.adapters.settings import Settings
from service.adapters.turn_queue import QUEUE_NAME, RqTurnQueue
from service.adapters.webhooks import QUEUE_NAME as NOTIFICATIONS
from service.usecases.ai_turns import EXPERT, FAST
from workers import runner
from workers.runner import TurnWorker


def test_a_worker_whose_queues_another_scheduler_serves_starts_none_and_says_nothing(
        redis_url: str, redis_client: redis.Redis, caplog: pytest.LogCaptureFixture) -> None:
    settings = Settings(redis_url=redis_url)
    worker = TurnWorker(RqTurnQueue(connect(redis_url), settings), 0.1, (FAST,),
                        notifications=False)  # as `spinner serve`'s fast-lane worker
    worker.scheduler = RQScheduler(worker.queues, connection=worker.connection)
    worker.last_cleaned_at = worker.scheduler.created_at  # rq's own maintenance is not due
    lock = RQScheduler.get_locking_key(QUEUE_NAME)
    redis_client.set(lock, "another-worker", ex=60)  # the other worker's scheduler holds it
    caplog.set_level(logging.INFO, logger="spinner.worker")
    for _ in range(3):
        worker.run_maintenance_tasks()
    assert worker.scheduler._process is None
    assert not [r for r in caplog.records if r.name == "spinner.worker"]
    redis_client.delete(lock)  # the one that served the queue is gone
    worker.run_maintenance_tasks()
    try:
        assert worker.scheduler._process is not None and worker.scheduler._process.is_alive()
        warned = [r.getMessage() for r in caplog.records if r.name == "spinner.worker"]
        assert len(warned) == 1 and "started it" in warned[0]
    finally:  # SIGKILL: rq's SIGTERM can reach the child before it handles SIGTERM, and
        worker.scheduler._process.kill()  # then it outlives the join, which waits for ever
        worker.scheduler._process.join(10)


def test_only_a_worker_of_ai_turns_runs_a_scheduler(redis_url: str, redis_client: redis.Redis,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Notifications keep their retries in the outbox: `spinner serve`'s notifier runs no
    scheduler (one left behind when the notifier was killed held its lock for nothing)."""
    asked: list[tuple[tuple[str, ...], bool]] = []
    monkeypatch.setattr(TurnWorker, "work", lambda worker, with_scheduler: asked.append(
        (tuple(worker.queue_names()), with_scheduler)))
    for lanes in [(), (FAST,), (FAST, EXPERT)]:
        runner.work(Settings(redis_url=redis_url), lanes, notifications=not lanes)
    assert asked == [((NOTIFICATIONS,), False), ((QUEUE_NAME,), True),
                     ((QUEUE_NAME, f"{QUEUE_NAME}-expert"), True)]
