"""Turn notifications on rq: put on an outbox (by the append that makes them, or one Redis
command after it), tried by drain jobs, first tries and retries alike.

`RqNotifier` is the use cases' `Notifier`: it checks URLs (webhook_targets) and pushes each
notification onto the outbox (`outbox`): a move's append pushes them itself, in its own
atomic step, where the store is a plain Redis (then the outbox lives there; else with the
queue). The push that finds no drain queued or running queues
`workers.jobs.drain_notifications`, which makes the tries (`drain`, through a
`webhook_delivery.Delivery`, whose lanes try each receiver's in order and many receivers at
once). Under load one drain job thus tries many notifications over kept connections, where a
job a notification cost a worker several times the try. A try that fails waits among the
outbox's retries until its time (growing delays), when a drain takes it again with the
first tries. A drain takes more while its lanes are busy, so a slow receiver holds up only
its own; after DRAIN_S it hands on to a fresh job at its first moment with none busy, so the
AI turns queued meanwhile for the same worker are not held up behind it for long."""

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
from service.adapters.webhook_delivery import (
    TIMEOUT_S,
    Delivery,
    DeliveryFailed,
    Notification,
    Postponed,
    Report,
)
from service.adapters.webhook_targets import Refused, resolve
from service.usecases.ports import dumps

QUEUE_NAME = "notifications"
"""The queue every worker takes deliveries from, after its AI turns."""
BATCH = 100
"""Notifications a drain takes from the outbox at once."""
MOST_IN_FLIGHT = 50 * BATCH
"""Notifications a drain has in its lanes at most (a few MB); it takes no more until they are
fewer. Well above what receivers without an answer hold in their lanes while their first try
waits, so that they do not hold up the first tries of others behind them in the outbox."""
DRAIN_S = 1.0
"""How long a drain job goes on before it hands on to a fresh job (once its lanes are idle)."""
GATHER_S = 0.05
"""How long a drain waits after taking fewer than BATCH, for more to gather: under load it
then takes many at once, and the outbox's writes (each made durable) are a few a batch."""
LINGER_S = 0.2
"""How long a drain whose outbox stays empty waits before it ends: under a steady load one
job thus tries every notification of DRAIN_S, not one job a few notifications."""
RENEW_S = LEASE_MS / 4000
"""How often a drain whose lanes are busy, taking nothing, renews its lease."""
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
        """Try the notifications in the outbox, and the retries due, for DRAIN_S (then hand
        on to a fresh drain); put each that failed among the retries. Return how many were
        taken (0 if another drain holds the lease)."""
        token = self.outbox.claim()
        if token is None:
            return 0
        with Delivery(self.store, self.allow_private, self._settler(token)) as delivery:
            return self._drain(token, delivery, time.monotonic() + DRAIN_S)

    def _drain(self, token: str, delivery: Delivery, ends: float) -> int:
        """Give the lanes what a lost drain left, then what the outbox holds, until nothing
        waits or is in flight for LINGER_S (then release the lease), the lease is lost, or
        `ends` has passed with the lanes idle (then hand on to a fresh drain job; while a
        lane is busy it takes more, so that the others do not wait for it); return how many
        were taken."""
        taken = self._give(delivery, self.outbox.recover(token))
        idle_since = renewed = time.monotonic()
        while taken is not None:
            delivery.check()
            now = time.monotonic()
            if taken and now > ends and not delivery.in_flight:
                if not self.outbox.release(token) and self.outbox.hand_on(token):
                    self.queue_drain()
                break
            room = MOST_IN_FLIGHT - delivery.in_flight
            batch = self._give(delivery, self.outbox.take(token, min(BATCH, room))) \
                if room > 0 else 0
            if batch is None:
                break
            if batch:
                taken, idle_since, renewed = taken + batch, now, now
            elif delivery.in_flight:
                idle_since = now
                if now - renewed > RENEW_S:
                    if not self.outbox.renew(token):
                        break
                    renewed = now
            elif now - idle_since >= LINGER_S and self.outbox.release(token):
                break
            if batch < BATCH:
                time.sleep(GATHER_S)
        return taken or 0

    @staticmethod
    def _give(delivery: Delivery, batch: list[bytes] | None) -> int | None:
        """Hand a batch to the lanes, oldest first; return its size (None if the lease was
        lost)."""
        if batch is None:
            return None
        delivery.submit(sorted((json.loads(entry) for entry in batch), key=lambda n: n[3]))
        return len(batch)

    def _settler(self, token: str) -> Report:
        """Return what settles notifications tried: forgets them, putting those that failed
        among the retries (or giving them up after their last try)."""
        def settle(tried: list[Notification], failed: list[tuple[Notification, DeliveryFailed]]
                   ) -> None:
            retries = [retry for notification, why in failed
                       if (retry := self._retry(notification, why)) is not None]
            self.outbox.settle(token, [notification[1] for notification in tried], retries)
        return settle

    def _retry(self, entry: Notification, failed: DeliveryFailed) -> tuple[float, str] | None:
        """Return when a failed notification's next try is due and its entry then (the
        delays left after it); None if that was its last try. One postponed (not tried) is
        due again after half its age (a try's timeout at least: fewer of them the longer
        its receiver is overwhelmed) with the same delays left, unless it is older than all
        its delays together: then it counts as tried, so none waits without end."""
        age = time.time() - entry[3]
        if isinstance(failed, Postponed) and age < sum(self.delays):
            wait = max(TIMEOUT_S, age / 2)
            log.info("%s; postponed %d s", failed, wait)
            return time.time() + wait, json.dumps(entry)
        delays = entry[4]
        if not delays:
            metrics.WEBHOOK_DELIVERIES.labels("given_up").inc()
            log.warning("%s; its last try: given up", failed)
            return None
        log.info("%s; retrying in %d s", failed, delays[0])
        return time.time() + delays[0], json.dumps([*entry[:4], delays[1:]])

    @reachable
    def queue_drain(self) -> None:
        """Queue a drain job, with no time limit: it lasts as long as its lanes are busy,
        each try bounded by its timeout, and a drain lost is replaced once its lease ends."""
        self.queue.enqueue_call("workers.jobs.drain_notifications", timeout=-1,
                                result_ttl=0, failure_ttl=24 * 3600)
