"""Runs an rq worker for AI turns, in-process (no fork per job) for fast replies."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence

import redis
from rq import Queue, SimpleWorker
from rq.scheduler import SCHEDULER_KEY_TEMPLATE, RQScheduler
from rq.scripts import release_lock
from rq.utils import utcparse

from service.adapters import logs
from service.adapters.bootstrap import connect
from service.adapters.settings import Settings
from service.adapters.turn_queue import RqTurnQueue
from service.adapters.webhooks import QUEUE_NAME as NOTIFICATIONS
from service.usecases.ai_turns import EXPERT, FAST
from service.usecases.ports import StoreUnavailable
from workers.jobs import services

log = logging.getLogger("spinner.worker")
READY_POLL_S = 0.5
COMMANDS_WAKE_S = 1.0
"""How often the thread that listens for rq's commands (stop a job, shut down) wakes."""
SILENT_SCHEDULER_S = 10.0
"""rq's scheduler heartbeats every second: one silent this long has died."""


class TurnWorker(SimpleWorker):
    """rq's in-process worker of some lanes (the fast one first), then, with
    `notifications`, of the notifications (webhook deliveries: a receiver that does not
    answer holds a delivery job up for seconds, which is why `spinner serve` gives them a
    worker of their own), that, every `every_s` seconds (idle too: it waits for a job no
    longer than that), starts rq's scheduler process again if it died (it dies on a Redis
    error, and retries wait on it), sweeps the queues for lost AI turns, queues the deferred
    turns that fit under their clients' caps (`drain`) and a drain of the notifications
    waiting, or whose retry is due, with none queued (`outbox`). rq's own maintenance
    (cleaning its registries) keeps its interval of ten minutes."""

    max_connection_wait_time = 2.0  # back off at most this long while Redis is down (rq: 60)

    def __init__(self, turns: RqTurnQueue, every_s: float, lanes: Sequence[str] = (FAST, EXPERT),
                 drain: Callable[[], int] = lambda: 0,
                 outbox: Callable[[], bool] = lambda: False, notifications: bool = True) -> None:
        self.every_s = every_s  # first: rq's __init__ reads dequeue_timeout
        queues = [turns.lanes[lane] for lane in lanes]
        if notifications:
            queues.append(Queue(NOTIFICATIONS, connection=turns.connection))
        super().__init__(queues, connection=turns.connection)
        self.turns = turns
        self.drain = drain
        self.outbox = outbox
        self.swept_at: float | None = None

    def subscribe(self) -> None:
        """Listen for rq's commands as rq does, but in a thread that wakes every
        COMMANDS_WAKE_S, not 60 s: on shutdown rq leaves the channel, then stops the thread,
        and redis-py 8's `stop` waits for it. Woken by the channel's goodbye before being
        told to stop, the thread would sleep out its 60 s, and the worker be killed."""
        self.pubsub = self.connection.pubsub()
        self.pubsub.subscribe(**{self.pubsub_channel_name: self.handle_payload})
        self.pubsub_thread = self.pubsub.run_in_thread(
            sleep_time=COMMANDS_WAKE_S, daemon=True,
            exception_handler=self._pubsub_exception_handler)

    @property
    def dequeue_timeout(self) -> int:
        """Seconds the worker blocks waiting for a job before its maintenance may run."""
        return max(1, math.ceil(self.every_s))

    @property
    def should_run_maintenance_tasks(self) -> bool:
        """Whether a sweep is due, or rq's own maintenance."""
        return (self.swept_at is None or time.monotonic() - self.swept_at >= self.every_s
                or super().should_run_maintenance_tasks)

    def run_maintenance_tasks(self) -> None:
        """Start rq's scheduler if none serves this worker's queues, run rq's maintenance if
        due, queue again the AI turns whose job is lost, and a drain of notifications that
        wait (or whose retry is due) with none queued."""
        if super().should_run_maintenance_tasks:
            super().run_maintenance_tasks()  # it starts a dead scheduler again, too
        elif self.scheduler is not None and not _running(self.scheduler):
            # as rq's maintenance does: none starts while another worker's serves the queues
            _free_dead_locks(self.scheduler, [queue.name for queue in self.queues])
            self.scheduler.acquire_locks(auto_start=True)
            if _running(self.scheduler):
                log.warning("rq's scheduler was not running (it died, or the one that served "
                            "these queues did): started it")
        self.swept_at = time.monotonic()
        try:
            requeued = self.turns.sweep()
            drained = self.drain()
            waiting = self.outbox()
        except (redis.RedisError, StoreUnavailable) as error:  # the next sweep retries
            log.warning("could not sweep for lost AI turns: %r", error)
        else:
            if requeued:
                log.warning("queued %d lost AI turn(s) again", requeued)
            if drained:
                log.info("queued %d deferred AI turn(s)", drained)
            if waiting:
                log.info("queued a drain: notifications wait with none queued (retries due, "
                         "or a drain lost)")


def _free_dead_locks(scheduler: RQScheduler, queues: list[str]) -> None:
    """Release the scheduler locks of `queues` held by a scheduler whose record says it last
    heartbeat SILENT_SCHEDULER_S ago: one that died with Redis has its lock and record
    restored from the append-only file with a minute to live, and no scheduler would run the
    retries and turn clocks meanwhile. A holder with no record is left alone."""
    connection = scheduler.connection
    for name in queues:
        key = scheduler.get_locking_key(name)
        holder = connection.get(key)
        if holder is None or holder.decode() == scheduler.name:
            continue
        beat = connection.hget(SCHEDULER_KEY_TEMPLATE % holder.decode(), "last_heartbeat")
        if not beat:
            continue
        silent_s = time.time() - utcparse(beat.decode()).timestamp()
        if silent_s > SILENT_SCHEDULER_S and release_lock(connection, key, holder.decode()):
            log.warning("freed the scheduler lock of %s: its holder has been silent for "
                        "%.0f s", name, silent_s)


def _running(scheduler: RQScheduler) -> bool:
    """Whether the scheduler's process runs (rq keeps it as `_process`)."""
    return scheduler._process is not None and scheduler._process.is_alive()


def work(settings: Settings, lanes: Sequence[str] = (FAST, EXPERT),
         notifications: bool = True) -> None:
    """Work the AI turn queues of `lanes`, then (with `notifications`) the notifications,
    until told to stop; with rq's scheduler only for AI turns (notifications keep their
    retries in the outbox)."""
    logs.configure()
    connection = connect(settings.queue_redis_url or settings.redis_url)
    wait_for_redis(connection)
    turns = RqTurnQueue(connection, settings)
    TurnWorker(turns, settings.ai_sweep_every_s, lanes,
               lambda: services().games.drain_deferred(),
               lambda: services().notifier.sweep(), notifications
               ).work(with_scheduler=bool(lanes))  # AI turns' retries and clocks need it


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
