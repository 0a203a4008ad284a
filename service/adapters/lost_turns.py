"""When an AI turn's rq job is lost: one atomic read of where the job is, and the verdict."""

from __future__ import annotations

from dataclasses import dataclass

from rq import Queue
from rq.job import Job, JobStatus
from rq.scheduler import RQScheduler
from rq.utils import utcparse
from rq.worker import BaseWorker

DEAD = (JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED)
TAKE_GRACE_S = 1.0
"""A live worker marks a job it took started well within this (a few round trips)."""

WHERE_IS_THE_JOB = """
-- KEYS: the job's hash, the queue, its intermediate list, its scheduled registry, the
-- scheduler's lock, the job's sighting mark; ARGV: the job id, the prefix of rq's worker
-- keys, the time now. A job taken by a worker, not yet marked started, is marked with the
-- time it was first seen so, for the enqueue that put it there (a retry is enqueued again).
-- Taken: in the intermediate list (a worker of one queue takes a job by LMOVE), or queued
-- but out of the queue (a worker of several queues takes it by LPOP, into no list).
local job = redis.call('HMGET', KEYS[1], 'status', 'enqueued_at', 'started_at', 'worker_name')
local worker_alive = 0
if job[4] then
  local worker = ARGV[2] .. job[4]
  if redis.call('EXISTS', worker) == 1 and redis.call('HEXISTS', worker, 'death') == 0 then
    worker_alive = 1
  end
end
local queued = redis.call('LPOS', KEYS[2], ARGV[1])
local taken = redis.call('LPOS', KEYS[3], ARGV[1]) or (job[1] == 'queued' and not queued)
local seen = false
if taken then
  local enqueued = job[2] or ''
  local mark = redis.call('HMGET', KEYS[6], 'enqueued_at', 'seen_at')
  seen = mark[2]
  if mark[1] ~= enqueued or not seen then
    seen = ARGV[3]
    redis.call('HSET', KEYS[6], 'enqueued_at', enqueued, 'seen_at', seen)
    redis.call('EXPIRE', KEYS[6], 3600)
  end
end
return {job[1], job[2], job[3], queued and 1 or 0, seen,
        redis.call('ZSCORE', KEYS[4], ARGV[1]), redis.call('EXISTS', KEYS[5]), worker_alive}
"""


@dataclass(frozen=True)
class JobSighting:
    """Where an AI turn's job was, all read at one instant; times in seconds since the epoch."""

    status: str | None  # None: no job (or one being deleted)
    enqueued_at: float | None
    started_at: float | None
    queued: bool  # in the queue, waiting for a worker
    taken_seen_at: float | None  # first seen taken by a worker, not yet marked started, at
    # this time, if it is so now
    due_at: float | None  # its time in the scheduled (retry) registry, if it is there
    scheduler_alive: bool  # some rq scheduler holds the queue's lock
    worker_alive: bool  # the worker named on the job has a key and has not registered death

    def lost(self, now: float, stuck_after_s: float) -> bool:
        """Whether no worker will ever finish the job, so the turn must be queued again.

        A worker marks a job it took started within milliseconds, and a scheduler moves a due
        job within a second: one still taken (queued `stuck_after_s` ago and seen taken for
        over `TAKE_GRACE_S`), started or overdue after `stuck_after_s` lies with a process
        that died. (A duplicate costs a worker the turn again, then does nothing: the game
        has moved on.)
        """
        if self.status is None or self.status in DEAD:
            return True
        if self.status == JobStatus.QUEUED:
            return not self.queued and _older(self.enqueued_at, now, stuck_after_s) \
                and _older(self.taken_seen_at, now, min(TAKE_GRACE_S, stuck_after_s))
        if self.status == JobStatus.STARTED:
            return not self.worker_alive or _older(self.started_at, now, stuck_after_s)
        if self.status == JobStatus.SCHEDULED:
            return (self.due_at is None or (self.due_at <= now and not self.scheduler_alive)
                    or _older(self.due_at, now, stuck_after_s))
        return False  # finished (or deferred): nothing is due


def _older(moment: float | None, now: float, seconds: float) -> bool:
    """Whether `moment` (None: unknown) is more than `seconds` before `now`."""
    return moment is None or now - moment > seconds


class JobLocator:
    """Reads a `JobSighting` of a job of one queue in one round trip (a Lua script)."""

    def __init__(self, queue: Queue) -> None:
        self.queue = queue
        self.script = queue.connection.register_script(WHERE_IS_THE_JOB)
        self.keys = [queue.key, queue.intermediate_queue_key, queue.scheduled_job_registry.key,
                     RQScheduler.get_locking_key(queue.name)]

    def mark_key(self, job_id: str) -> str:
        """The key of the mark of when a job was first seen taken (delete it with the job)."""
        return f"{self.queue.intermediate_queue_key}:seen:{job_id}"

    def sight(self, job_id: str, now: float) -> JobSighting:
        """Return where the job `job_id` is at `now` (seconds since the epoch)."""
        status, enqueued, started, queued, seen, due, scheduler, worker = self.script(
            keys=[Job.key_for(job_id), *self.keys, self.mark_key(job_id)],
            args=[job_id, BaseWorker.redis_worker_namespace_prefix, repr(now)])
        return JobSighting(status=_text(status), enqueued_at=_epoch(enqueued),
                           started_at=_epoch(started), queued=bool(queued),
                           taken_seen_at=_number(seen), due_at=_number(due),
                           scheduler_alive=bool(scheduler), worker_alive=bool(worker))


def _text(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


def _number(value: bytes | None) -> float | None:
    return None if value is None else float(value)


def _epoch(stamp: bytes | str | None) -> float | None:
    """Return an rq timestamp (`2024-05-01T12:00:00.123456Z`) in seconds since the epoch."""
    text = _text(stamp)
    return utcparse(text).timestamp() if text else None

