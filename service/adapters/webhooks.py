"""Turn notifications on rq: put on an outbox (by the append that makes them, or one Redis
command after it), tried in batches by drain jobs, first tries and retries alike.

`RqNotifier` is the use cases' `Notifier`: it checks URLs (webhook_targets) and pushes each
notification onto the outbox (`outbox`): a move's append pushes them itself, in its own
atomic step, where the store is a plain Redis (then the outbox lives there; else with the
queue). The push that finds no drain queued or running queues
`workers.jobs.drain_notifications`, which makes the tries (`drain`, through a
`webhook_delivery.Delivery`). Under load one drain job thus tries many notifications over
kept connections, where a job a notification cost a worker several times the try. A try that
fails waits among the outbox's retries until its time (growing delays), when a drain takes
it again with the first tries, receivers tried at once: so receivers that never answer cost
a drain one timeout a batch, however many of their notifications are retried. A drain hands
on to a fresh job after DRAIN_S, so the AI turns queued meanwhile are not held up behind
it."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import redis
from rq import Queue

from service.adapters import metrics
from service.adapters.outbox import LEASE_MS, Outbox
from service.adapters.redis_store import RedisEventStore, reachable
from service.adapters.settings import Settings
from service.adapters.webhook_delivery import TIMEOUT_S, Delivery, DeliveryFailed
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
RESOLVE_S = 30
"""A bound on resolving the names of a batch's receivers."""
DEFERRED_S = TIMEOUT_S
"""How long a notification not sent (its receiver gave no answer to another in the same
drain) waits to be tried, at no cost of a try, by a later drain."""
DRAIN_TIMEOUT_S = int(RESOLVE_S + BATCH * TIMEOUT_S + DRAIN_S)
"""rq's bound on a drain job: a batch whose every receiver gives no answer, at the end."""
log = logging.getLogger("spinner.webhooks")


def retry_delays(text: str) -> list[int]:
    """Return the seconds before each retry, from the setting's comma-separated integers."""
    delays = [int(part) for part in text.split(",") if part.strip()]
    if not delays or min(delays) < 0:
        raise ValueError(f"WEBHOOK_RETRY_S must list whole seconds >= 0, not {text!r}")
    return delays


class RqNotifier:
    """Checks notification URLs, pushes notifications onto the outbox, and drains it (in a
    worker)."""

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
        """Queue a drain if notifications wait, or a retry is due, and none is queued or
        running (no drain ran when the retry came due, or its job or worker was lost); True
        if it did."""
        if self.outbox.sweep():
            self.queue_drain()
            return True
        return False

    def drain(self) -> int:
        """Try the notifications in the outbox, and the retries due, a batch at a time, for
        DRAIN_S (then queue a fresh drain); put each that failed among the retries. Return
        how many were taken (tried, or deferred: 0 if another drain holds the lease)."""
        token = self.outbox.claim()
        if token is None:
            return 0
        with Delivery(self.store, self.allow_private) as delivery:
            return self._drain(token, delivery, time.monotonic() + DRAIN_S)

    def _drain(self, token: str, delivery: Delivery, ends: float) -> int:
        """Try batches until the outbox stays empty for LINGER_S (then release the lease),
        the lease is lost, or `ends` (then hand on to a fresh drain job); return how many
        were taken."""
        tried, idle_since = 0, time.monotonic()
        while (batch := self.outbox.take(token, BATCH)) is not None:
            now = time.monotonic()
            if batch:
                retries = self._try_batch(token, delivery, batch)
                if retries is None:
                    break
                self.outbox.done(token, retries)
                tried, idle_since = tried + len(batch), time.monotonic()
            elif now - idle_since >= LINGER_S and self.outbox.release(token):
                break
            if time.monotonic() > ends:
                if self.outbox.hand_on(token):
                    self.queue_drain()
                break
            if len(batch) < BATCH:
                time.sleep(GATHER_S)
        return tried

    def _try_batch(self, token: str, delivery: Delivery, batch: list[bytes]
                   ) -> list[tuple[float, str]] | None:
        """Try each of `batch`, a slice at a time, renewing the lease between slices that
        are slow; return the retries of those that failed (when due, entry). None if the
        lease was lost (another drain tries the batch again)."""
        entries = [json.loads(entry) for entry in batch]
        retries = []
        for start in range(0, len(entries), SLICE):
            began = time.monotonic()
            part = {entry[1]: entry for entry in entries[start:start + SLICE]}
            tries = [tuple(entry[:4]) for entry in part.values()]
            for notification, failed in delivery.attempt_all(tries):
                retry = self._retry(part[notification[1]], failed)
                if retry is not None:
                    retries.append(retry)
            if time.monotonic() - began > RENEW_S and not self.outbox.renew(token):
                return None
        return retries

    @staticmethod
    def _retry(entry: list[Any], failed: DeliveryFailed) -> tuple[float, str] | None:
        """Return when a failed notification's next try is due and its entry then (the
        delays left after it; all of them, and due after a timeout, if it was not sent);
        None if that was its last try."""
        game_id, webhook_id, payload, made_at, delays = entry
        if not failed.tried:
            log.info("%s; trying in %d s", failed, DEFERRED_S)
            return time.time() + DEFERRED_S, json.dumps(entry)
        if not delays:
            metrics.WEBHOOK_DELIVERIES.labels("given_up").inc()
            log.warning("%s; its last try: given up", failed)
            return None
        log.info("%s; retrying in %d s", failed, delays[0])
        return time.time() + delays[0], json.dumps(
            [game_id, webhook_id, payload, made_at, delays[1:]])

    @reachable
    def queue_drain(self) -> None:
        """Queue a drain job."""
        self.queue.enqueue_call("workers.jobs.drain_notifications", timeout=DRAIN_TIMEOUT_S,
                                result_ttl=0, failure_ttl=24 * 3600)
