"""Runs an rq worker for AI turns, in-process (no fork per job) for fast replies."""

from __future__ import annotations

from rq import Queue, SimpleWorker

from service.adapters import logs
from service.adapters.bootstrap import connect
from service.adapters.settings import Settings
from service.adapters.turn_queue import QUEUE_NAME


def work(settings: Settings) -> None:
    """Work the AI turn queue until the worker is told to stop."""
    logs.configure()
    connection = connect(settings.queue_redis_url or settings.redis_url)
    queue = Queue(QUEUE_NAME, connection=connection)
    SimpleWorker([queue], connection=connection).work(with_scheduler=True)
