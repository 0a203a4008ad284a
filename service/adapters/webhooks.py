"""Turn notifications on rq: put on an outbox (by the append that makes them, or one Redis
command after it), first tried in batches by a drain job, retried one rq job each with
growing delays.

`RqNotifier` is the use cases' `Notifier`: it checks URLs (webhook_targets) and pushes each
notification onto the outbox (`outbox`): a move's append pushes them itself, in its own
atomic step, where the store is a plain Redis (then the outbox lives there; else with the
queue). The push that finds no drain queued or running queues
`workers.jobs.drain_notifications`, which makes the first tries (`drain`, through a
`webhook_delivery.Delivery`). Under load one drain job thus tries many notifications over
kept connections, where a job a notification cost a worker several times the try. A first
try that fails is queued as `workers.jobs.deliver_notification` under its webhook-id, with
rq's retries for the rest of the schedule. A drain hands on to a fresh job after DRAIN_S,
so the AI turns queued meanwhile are not held up behind it."""

from __future__ import annotations

import contextlib
import json
import logging
import time
from datetime import timedelta
from typing import Any

import redis
from rq import Queue, Retry
from rq.exceptions import DuplicateJobError

from service.adapters import metrics
from service.adapters.outbox import LEASE_MS, Outbox
from service.adapters.redis_store import RedisEventStore, reachable
from service.adapters.settings import Settings
from service.adapters.webhook_delivery import TIMEOUT_S, Delivery, Notification
from service.adapters.webhook_targets import Refused, resolve
from service.usecases.ports import dumps

QUEUE_NAME = "notifications"
"""The queue every worker takes deliveries from, after its AI turns."""
BATCH = 100
"""Notifications a drain takes from the outbox at once."""
DRAIN_S = 1.0
"""How long a drain job takes more batches before it hands on to a fresh job."""
GATHER_S = 0.05
"""How long a drain waits after a batch shorter than BATCH, for more to gather: under load a
batch then holds many, and the outbox's writes (each made durable) are a few a batch."""
LINGER_S = 0.2
"""How long a drain whose outbox stays empty waits before it ends: under a steady load one
job thus tries every notification of DRAIN_S, not one job a few notifications."""
SLICE = 32
"""Notifications of a batch tried together; the lease is renewed after a slice that was slow
(its receivers gave no answer)."""
RENEW_S = LEASE_MS / 3000
"""How slow a slice must be for the lease to be renewed after it."""
JOB_TIMEOUT_S = 30
"""rq's bound on one retry: a name to resolve, then a connection and an answer of TIMEOUT_S."""
DRAIN_TIMEOUT_S = int(JOB_TIMEOUT_S + BATCH * TIMEOUT_S + DRAIN_S)
"""rq's bound on a drain job: a batch whose every receiver gives no answer, at the end."""
log = logging.getLogger("spinner.webhooks")


def retry_delays(text: str) -> list[int]:
    """Return the seconds before each retry, from the setting's comma-separated integers."""
    delays = [int(part) for part in text.split(",") if part.strip()]
    if not delays or min(delays) < 0:
        raise ValueError(f"WEBHOOK_RETRY_S must list whole seconds >= 0, not {text!r}")
    return delays


class RqNotifier:
    """Checks notification URLs, pushes notifications onto the outbox, drains it and
    retries (in a worker)."""

    def __init__(self, connection: redis.Redis, store: RedisEventStore,
                 settings: Settings) -> None:
        self.queue = Queue(QUEUE_NAME, connection=connection)
        self.in_store = store.keeps_outbox  # then appends push their notifications themselves
        self.outbox = Outbox(store.client if self.in_store else connection)
        self.store = store
        self.allow_private = settings.webhooks_allow_private
        self.delays = retry_delays(settings.webhook_retry_s)

    def refusal(self, url: str) -> str | None:
        """Return why `url` may not receive notifications, None if it may."""
        try:
            resolve(url, self.allow_private)
        except Refused as refused:
            return str(refused)
        return None

    @reachable
    def send(self, game_id: str, webhook_id: str, body: dict[str, Any]) -> None:
        """Push one notification onto the outbox; queue a drain if none is queued or
        running."""
        try:
            if self.outbox.push(self._entry(game_id, webhook_id, body)):
                self.queue_drain()
        except redis.RedisError:
            metrics.WEBHOOK_DELIVERIES.labels("not_queued").inc()
            raise

    def entries(self, game_id: str, bodies: list[tuple[str, dict[str, Any]]]) -> list[str]:
        """Return the outbox entries of notifications (webhook-id, body) for the store's
        append to push, if the outbox lives in the store (a plain Redis); else none."""
        if not self.in_store:
            return []
        return [self._entry(game_id, webhook_id, body) for webhook_id, body in bodies]

    def _entry(self, game_id: str, webhook_id: str, body: dict[str, Any]) -> str:
        """Return a notification's outbox entry, with the retry delays of this API."""
        return json.dumps([game_id, webhook_id, dumps(body), time.time(), self.delays])

    def sweep(self) -> bool:
        """Queue a drain if notifications wait and none is queued or running (its job or
        its worker was lost); True if it did."""
        if self.outbox.sweep():
            self.queue_drain()
            return True
        return False

    def drain(self) -> int:
        """Make the first try of the notifications in the outbox, a batch at a time, for
        DRAIN_S (then queue a fresh drain); queue each that failed for its retries. Return
        how many were tried (0 if another drain holds the lease)."""
        token = self.outbox.claim()
        if token is None:
            return 0
        with Delivery(self.store, self.allow_private) as delivery:
            return self._drain(token, delivery, time.monotonic() + DRAIN_S)

    def _drain(self, token: str, delivery: Delivery, ends: float) -> int:
        """Try batches until the outbox stays empty for LINGER_S (then release the lease),
        the lease is lost, or `ends` (then hand on to a fresh drain job); return how many
        were tried."""
        tried, idle_since = 0, time.monotonic()
        while (batch := self.outbox.take(token, BATCH)) is not None:
            now = time.monotonic()
            if batch:
                if not self._try_batch(token, delivery, batch):
                    break
                self.outbox.done(token)
                tried, idle_since = tried + len(batch), time.monotonic()
            elif now - idle_since >= LINGER_S and self.outbox.release(token):
                break
            if now > ends:
                if self.outbox.hand_on(token):
                    self.queue_drain()
                break
            if len(batch) < BATCH:
                time.sleep(GATHER_S)
        return tried

    def _try_batch(self, token: str, delivery: Delivery, batch: list[bytes]) -> bool:
        """Make the first try of each of `batch`, a slice at a time, renewing the lease
        between slices that are slow; queue each that failed for its retries. False if the
        lease was lost (another drain tries the batch again)."""
        entries = [json.loads(entry) for entry in batch]
        for start in range(0, len(entries), SLICE):
            began = time.monotonic()
            part = entries[start:start + SLICE]
            failures = delivery.attempt_all([tuple(entry[:4]) for entry in part])
            delays = {entry[1]: entry[4] for entry in part}
            for notification, failed in failures:
                log.info("%s; retrying in %d s", failed, delays[notification[1]][0])
                self.retry(notification, delays[notification[1]])
            if time.monotonic() - began > RENEW_S and not self.outbox.renew(token):
                return False
        return True

    @reachable
    def queue_drain(self) -> None:
        """Queue a drain job."""
        self.queue.enqueue_call("workers.jobs.drain_notifications", timeout=DRAIN_TIMEOUT_S,
                                result_ttl=0, failure_ttl=24 * 3600)

    def retry(self, notification: Notification, delays: list[int]) -> None:
        """Queue the retries of a notification (game id, webhook-id, body, made at) whose
        first try failed, `delays` apart, under its webhook-id (once: a retry queued stands)."""
        rest = delays[1:]
        with contextlib.suppress(DuplicateJobError):
            self.queue.enqueue_in(
                timedelta(seconds=delays[0]), "workers.jobs.deliver_notification",
                *notification, job_id=notification[1], unique=True,
                job_timeout=JOB_TIMEOUT_S, result_ttl=600, failure_ttl=24 * 3600,
                retry=Retry(max=len(rest), interval=rest) if rest else None)

    def deliver(self, game_id: str, webhook_id: str, payload: str, made_at: float) -> None:
        """Make one retry: resolve and check the game's URL again, POST the signed payload
        to the address checked; DeliveryFailed (retried by rq) unless it answered 2xx."""
        with Delivery(self.store, self.allow_private) as delivery:
            delivery.attempt(game_id, webhook_id, payload, made_at)
