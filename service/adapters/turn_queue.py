"""AI turns on rq: one job per game version, never queued twice, healed when lost."""

from __future__ import annotations

import contextlib
import logging
from datetime import UTC, datetime

import redis
from rq import Queue, Retry
from rq.exceptions import DuplicateJobError, InvalidJobOperation, NoSuchJobError
from rq.job import Job, JobStatus

from service.adapters.settings import Settings

QUEUE_NAME = "ai-turns"
DEAD = (JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED)
log = logging.getLogger("spinner.queue")


def job_id(game_id: str, version: int) -> str:
    """Return the id of the AI turn job due at `version` of a game."""
    return f"ai-turn-{game_id}-{version}"


class RqTurnQueue:
    """Queues `workers.jobs.take_ai_turn(game_id, version)` on rq."""

    def __init__(self, connection: redis.Redis, settings: Settings) -> None:
        self.connection = connection
        self.queue = Queue(QUEUE_NAME, connection=connection)
        self.settings = settings

    def enqueue_turn(self, game_id: str, version: int) -> None:
        """Queue the AI turn due at `version`, unless a job for it exists already."""
        with contextlib.suppress(DuplicateJobError):
            self.queue.enqueue_call(
                "workers.jobs.take_ai_turn", args=(game_id, version),
                job_id=job_id(game_id, version), unique=True,
                timeout=self.settings.ai_job_timeout_s,
                retry=Retry(max=self.settings.ai_job_retries, interval=1),
                result_ttl=600, failure_ttl=24 * 3600)

    def heal_turn(self, game_id: str, version: int) -> None:
        """Queue the turn again if its job is lost, failed, or stuck on a dead worker.

        Best effort on a read path: a race with the worker finishing the job is harmless
        (the game has moved on; a re-queued stale job does nothing), so errors are logged.
        """
        try:
            job = Job.fetch(job_id(game_id, version), connection=self.connection)
            if self._lost(job):
                job.delete()
            else:
                return
        except (NoSuchJobError, InvalidJobOperation):
            pass  # no job, or one deleted as its status was read: queue it (again)
        except (redis.RedisError, ValueError) as error:
            log.warning("could not check the AI turn of %s@%s: %r", game_id, version, error)
            return
        self.enqueue_turn(game_id, version)

    def _lost(self, job: Job) -> bool:
        """Whether no worker will ever finish `job` (a racing duplicate loses at append)."""
        status = job.get_status()
        if status == JobStatus.QUEUED:
            return not self._waiting(job)  # out of both queues: the queue was flushed
        if status == JobStatus.STARTED:
            started = job.started_at or datetime.now(UTC)
            age = (datetime.now(UTC) - started.replace(tzinfo=UTC)).total_seconds()
            return age > self.settings.ai_stuck_after_s  # its worker died mid-turn
        return status in DEAD

    def _waiting(self, job: Job) -> bool:
        """Whether a queued `job` is still in its queue, or taken by a worker that has not yet
        marked it started (rq moves it to its intermediate queue first), or has moved on: all
        read in one transaction, so that a job on its way between them is seen somewhere."""
        with self.connection.pipeline(transaction=True) as snapshot:
            snapshot.lpos(self.queue.key, job.id)
            snapshot.lpos(self.queue.intermediate_queue_key, job.id)
            snapshot.hget(job.key, "status")
            queued, taken, status = snapshot.execute()
        status = status.decode() if isinstance(status, bytes) else status
        return queued is not None or taken is not None or status != JobStatus.QUEUED
