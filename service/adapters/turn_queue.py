"""AI turns on rq: one job per game version, never queued twice, healed when lost."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import redis
from rq import Queue, Retry
from rq.exceptions import (
    DeserializationError,
    DuplicateJobError,
    InvalidJobOperation,
    NoSuchJobError,
)
from rq.job import Job, JobStatus
from rq.utils import parse_composite_key

from service.adapters.lost_turns import JobLocator
from service.adapters.redis_store import reachable
from service.adapters.settings import Settings
from service.usecases.ai_turns import EXPERT, FAST
from service.usecases.ports import StoreUnavailable

QUEUE_NAME = "ai-turns"
EXPERT_QUEUE_NAME = "ai-turns-expert"
"""The fast lane's queue (`greedy`, `random`) and the expert lane's: a worker takes from the
fast one first, and `spinner serve` runs a worker of the fast lane alone, so that a quick
reply never waits behind searches."""
JOB_PREFIX = "ai-turn-"
CLOCK_PREFIX = "turn-clock-"
"""The jobs of turn clocks (API.md "Turn clocks"), in the fast lane: a timed-out seat's move
is the `random` AI's."""
SWEEP_MOST = 100
"""Marks of queued turns not yet run that a sweep looks at (see `_sweep_pending`)."""
log = logging.getLogger("spinner.queue")


def job_id(game_id: str, version: int) -> str:
    """Return the id of the AI turn job due at `version` of a game."""
    return f"{JOB_PREFIX}{game_id}-{version}"


def clock_job_id(game_id: str, version: int) -> str:
    """Return the id of the turn clock job of the human turn due at `version` of a game."""
    return f"{CLOCK_PREFIX}{game_id}-{version}"


def pending_clocks(queue: Queue) -> int:
    """Return how many turn clocks of `queue` wait in rq's scheduled registry for their
    deadline."""
    key = queue.scheduled_job_registry.key
    return sum(1 for _ in queue.connection.zscan_iter(key, match=f"{CLOCK_PREFIX}*"))


def turn_of(job: str) -> tuple[str, int] | None:
    """Return the game and version an AI turn's job id names (None: not such an id)."""
    game_id, _, version = job.removeprefix(JOB_PREFIX).rpartition("-")
    if not job.startswith(JOB_PREFIX) or not game_id or not version.isdigit():
        return None
    return game_id, int(version)


class RqTurnQueue:
    """Queues `workers.jobs.take_ai_turn(game_id, version)` on rq, in its lane's queue."""

    def __init__(self, connection: redis.Redis, settings: Settings) -> None:
        self.connection = connection
        self.queue = Queue(QUEUE_NAME, connection=connection)
        self.lanes = {FAST: self.queue, EXPERT: Queue(EXPERT_QUEUE_NAME, connection=connection)}
        self.settings = settings
        self.locators = {lane: JobLocator(queue) for lane, queue in self.lanes.items()}

    @reachable
    def enqueue_turn(self, game_id: str, version: int, lane: str = FAST) -> None:
        """Queue the AI turn due at `version` in its lane, unless a job for it exists already;
        raise StoreUnavailable when the queue's Redis cannot take it now."""
        job = job_id(game_id, version)
        with contextlib.suppress(DuplicateJobError):
            self.lanes[lane].enqueue_call(
                "workers.jobs.take_ai_turn", args=(game_id, version), job_id=job, unique=True,
                timeout=self.settings.ai_job_timeout_s,
                retry=Retry(max=self.settings.ai_job_retries, interval=1),
                result_ttl=600, failure_ttl=24 * 3600)
        self.connection.zadd(self._pending(lane), {job: time.time()})

    @reachable
    def turn_done(self, game_id: str, version: int) -> None:
        """Drop the mark of the AI turn due at `version`: its job has run (see `_sweep`)."""
        with self.connection.pipeline(transaction=False) as done:
            for lane in self.lanes:
                done.zrem(self._pending(lane), job_id(game_id, version))
            done.execute()

    def _pending(self, lane: str) -> str:
        """The key of the lane's queued turns not yet run (a sorted set by when each was
        queued): the one record of a job the worker of both lanes took (rq's LPOP puts it in
        no list) and died with before it marked the job started."""
        return f"{self.lanes[lane].key}:pending"

    @reachable
    def schedule_clock(self, game_id: str, version: int, due: float) -> None:
        """Have `workers.jobs.run_out_clock(game_id, version)` run at `due` (Unix time) by
        rq's scheduler, or at once if it is past, unless a job for it exists already; raise
        StoreUnavailable when the queue's Redis cannot take it now."""
        options: dict[str, Any] = {
            "args": (game_id, version), "job_id": clock_job_id(game_id, version),
            "unique": True, "job_timeout": self.settings.ai_job_timeout_s,
            "retry": Retry(max=self.settings.ai_job_retries, interval=1),
            "result_ttl": 600, "failure_ttl": 24 * 3600}
        with contextlib.suppress(DuplicateJobError):
            if due <= time.time():
                self.queue.enqueue("workers.jobs.run_out_clock", **options)
            else:
                self.queue.enqueue_at(datetime.fromtimestamp(due, UTC),
                                      "workers.jobs.run_out_clock", **options)

    def heal_clock(self, game_id: str, version: int, due: float) -> None:
        """Schedule the turn clock again if its job is lost, as `heal_turn` does for an AI
        turn (a clock's job waits in rq's scheduled registry until `due`)."""
        self._heal_job(clock_job_id(game_id, version), FAST,
                       lambda: self.schedule_clock(game_id, version, due))

    def heal_turn(self, game_id: str, version: int, lane: str = FAST) -> None:
        """Queue the turn again if its job is lost: gone, failed, or left for
        `ai_stuck_after_s` with a worker or scheduler that died (see JobSighting.lost).

        One round trip while the job is fine (this runs on every read of a game whose AI is
        to move). Best effort: a race with a worker finishing the job is harmless (the game
        has moved on; a re-queued stale job does nothing), so errors are logged.
        """
        self._heal(game_id, version, lane)

    def waiting(self, lane: str) -> int:
        """Return how many jobs wait in the lane's queue."""
        return self.lanes[lane].count

    def sweep(self) -> int:
        """Heal every AI turn whose job rq holds taken, started or overdue, in either lane
        (so that a game nobody reads moves on too); return how many were queued again."""
        return sum(self._sweep(lane) for lane in self.lanes)

    def _sweep(self, lane: str) -> int:
        """Heal the lost AI turns of one lane; return how many were queued again."""
        queue = self.lanes[lane]
        with self.connection.pipeline(transaction=False) as scan:
            scan.lrange(queue.intermediate_queue_key, 0, -1)
            scan.zrangebyscore(queue.scheduled_job_registry.key, "-inf", time.time())
            scan.zrange(queue.started_job_registry.key, 0, -1)
            taken, overdue, started = scan.execute()
        jobs = {key.decode() for key in taken + overdue}
        jobs.update(parse_composite_key(key.decode())[0] for key in started)
        turns = [turn for turn in map(turn_of, sorted(jobs)) if turn is not None]
        return sum(self._heal(game_id, version, lane) for game_id, version in turns) \
            + self._sweep_pending(lane)

    def _sweep_pending(self, lane: str) -> int:
        """Heal the lane's turns queued over `ai_stuck_after_s` ago and not yet run (at most
        SWEEP_MOST a sweep, the oldest first); return how many were queued again. A finished
        job's mark is dropped; one still waiting or under way is looked at again as long
        after."""
        key, now = self._pending(lane), time.time()
        stale = self.connection.zrangebyscore(key, "-inf", now - self.settings.ai_stuck_after_s,
                                              start=0, num=SWEEP_MOST)
        healed = 0
        for job in (member.decode() for member in stale):
            turn = turn_of(job)
            if turn is None or self.locators[lane].sight(job, now).status == JobStatus.FINISHED:
                self.connection.zrem(key, job)
            elif self._heal(*turn, lane):
                healed += 1
            else:
                self.connection.zadd(key, {job: now}, xx=True)
        return healed

    def _heal(self, game_id: str, version: int, lane: str) -> bool:
        """Queue the turn again if its job is lost; return whether it was."""
        return self._heal_job(job_id(game_id, version), lane,
                              lambda: self.enqueue_turn(game_id, version, lane))

    def _heal_job(self, job: str, lane: str, again: Callable[[], None]) -> bool:
        """Call `again` (queue the job anew, uniquely) if the job `job` of `lane` is lost,
        deleting first one that no worker will finish; return whether it was lost.

        A job not found is only queued: it may be about to be, by the process whose append
        made its turn due, and rq's unique enqueue lets exactly one of that process and the
        game's readers queue it. Deleting what another has just queued (a worker may have
        taken it already) would have the turn played twice."""
        now = time.time()
        try:
            sighting = self.locators[lane].sight(job, now)
            if not sighting.lost(now, self.settings.ai_stuck_after_s):
                return False
            if sighting.status is not None:
                log.info("the job %s was lost: queueing it again", job)
                self._forget(job, lane)
            again()
        except (redis.RedisError, StoreUnavailable, ValueError) as error:
            log.warning("could not check the job %s: %r", job, error)
            return False
        return True

    def _forget(self, job: str, lane: str) -> None:
        """Delete a lost job: its hash, its place in the queue, rq's registries and the
        intermediate list (there, rq's own cleanup would fail it a minute later), its mark."""
        with contextlib.suppress(NoSuchJobError, InvalidJobOperation, DeserializationError):
            Job.fetch(job, connection=self.connection).delete()  # stops at a missing status
        queue = self.lanes[lane]
        with self.connection.pipeline(transaction=True) as forget:
            forget.lrem(queue.key, 0, job)
            forget.lrem(queue.intermediate_queue_key, 0, job)
            forget.zrem(queue.scheduled_job_registry.key, job)
            forget.delete(Job.key_for(job), self.locators[lane].mark_key(job))
            forget.execute()
