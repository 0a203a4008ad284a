"""Turn notifications on rq: one job per notification, retried with growing delays, each try
signed per Standard Webhooks 1.0 and POSTed to the checked address, redirects not followed.

`RqNotifier` is the use cases' `Notifier`: it checks URLs (webhook_targets) and queues
`workers.jobs.deliver_notification`, which calls `deliver` in a worker. The secret stays in
the game's meta: no job, log line or error holds it."""

from __future__ import annotations

import contextlib
import http.client
import logging
import socket
import ssl
import time
from datetime import UTC, datetime
from typing import Any

import redis
from rq import Queue, Retry
from rq.exceptions import DuplicateJobError
from standardwebhooks.webhooks import Webhook

from service.adapters import metrics
from service.adapters.redis_store import RedisEventStore, reachable
from service.adapters.settings import Settings
from service.adapters.webhook_targets import Refused, Target, resolve
from service.usecases.ports import dumps

QUEUE_NAME = "notifications"
"""The queue every worker takes deliveries from, after its AI turns."""
TIMEOUT_S = 5.0
"""A try that has no connection, or no answer's head, within this long failed (API.md)."""
JOB_TIMEOUT_S = 30
"""rq's bound on one try: a name to resolve, then a connection and an answer of TIMEOUT_S each."""
USER_AGENT = "spinner-dominoes-webhooks/1"
log = logging.getLogger("spinner.webhooks")


class DeliveryFailed(Exception):
    """A try that did not deliver (its message names why, never the secret): rq retries it."""


def retry_delays(text: str) -> list[int]:
    """Return the seconds before each retry, from the setting's comma-separated integers."""
    delays = [int(part) for part in text.split(",") if part.strip()]
    if not delays or min(delays) < 0:
        raise ValueError(f"WEBHOOK_RETRY_S must list whole seconds >= 0, not {text!r}")
    return delays


class RqNotifier:
    """Checks notification URLs, queues deliveries on rq and makes them (in a worker)."""

    def __init__(self, connection: redis.Redis, store: RedisEventStore,
                 settings: Settings) -> None:
        self.queue = Queue(QUEUE_NAME, connection=connection)
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
        """Queue the delivery of one notification, once (its job id is its webhook-id)."""
        try:
            with contextlib.suppress(DuplicateJobError):
                self.queue.enqueue_call(
                    "workers.jobs.deliver_notification",
                    args=(game_id, webhook_id, dumps(body), time.time()), job_id=webhook_id,
                    unique=True, timeout=JOB_TIMEOUT_S, result_ttl=600,
                    failure_ttl=24 * 3600, retry=Retry(max=len(self.delays), interval=self.delays))
        except redis.RedisError:
            metrics.WEBHOOK_DELIVERIES.labels("not_queued").inc()
            raise

    def deliver(self, game_id: str, webhook_id: str, payload: str, made_at: float) -> None:
        """Make one try: resolve and check the game's URL again, POST the signed payload to
        the address checked; DeliveryFailed (retried) unless it answered 2xx. A game gone,
        or without a URL, is not notified."""
        stored = self.store.meta(game_id)
        url, secret = stored.get("notify_url"), stored.get("notify_secret")
        if not url or not secret:
            return
        try:
            target = resolve(url, self.allow_private)
        except Refused as refused:
            metrics.WEBHOOK_DELIVERIES.labels("blocked").inc()
            raise DeliveryFailed(f"{webhook_id}: not called: {refused}") from None
        status = self._post(target, signed_headers(secret, webhook_id, payload), payload)
        if not 200 <= status < 300:
            metrics.WEBHOOK_DELIVERIES.labels("rejected").inc()
            raise DeliveryFailed(f"{webhook_id}: the receiver answered {status}")
        metrics.WEBHOOK_DELIVERIES.labels("delivered").inc()
        metrics.WEBHOOK_SECONDS.observe(max(0.0, time.time() - made_at))

    def _post(self, target: Target, headers: dict[str, str], payload: str) -> int:
        """POST to the target's checked address; return the answer's status (a redirect is
        not followed); DeliveryFailed if no answer's head came within TIMEOUT_S in all."""
        connection, deadline = pinned(target), time.monotonic() + TIMEOUT_S
        try:
            connection.request("POST", target.path, body=payload.encode(), headers=headers)
            if connection.sock is not None:  # the rest of the time, for the answer's head
                connection.sock.settimeout(max(0.001, deadline - time.monotonic()))
            return connection.getresponse().status
        except (OSError, http.client.HTTPException) as error:  # refused, timed out, TLS
            metrics.WEBHOOK_DELIVERIES.labels("no_answer").inc()
            raise DeliveryFailed(f"no answer: {type(error).__name__}") from None
        finally:
            connection.close()


def signed_headers(secret: str, webhook_id: str, payload: str) -> dict[str, str]:
    """Return a try's headers: JSON, and Standard Webhooks' id, timestamp (now) and
    signature, made by the `standardwebhooks` library."""
    now = datetime.fromtimestamp(int(time.time()), tz=UTC)
    signature = Webhook(secret).sign(msg_id=webhook_id, timestamp=now, data=payload)
    return {"Content-Type": "application/json", "User-Agent": USER_AGENT,
            "webhook-id": webhook_id, "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": signature}


class PinnedHTTP(http.client.HTTPConnection):
    """An HTTP connection to a checked address, whatever its host name resolves to now."""

    def __init__(self, target: Target) -> None:
        super().__init__(target.host, target.port, timeout=TIMEOUT_S)
        self.address = target.address

    def connect(self) -> None:
        """Connect to the checked address."""
        self.sock = socket.create_connection((self.address, self.port), self.timeout)


class PinnedHTTPS(PinnedHTTP):
    """The same over TLS, which checks the certificate against the host name (its SNI)."""

    default_port = 443  # a Host header names no port that is https's own
    TLS = ssl.create_default_context()

    def connect(self) -> None:
        """Connect to the checked address and start TLS for the URL's host name."""
        super().connect()
        self.sock = self.TLS.wrap_socket(self.sock, server_hostname=self.host)


def pinned(target: Target) -> PinnedHTTP:
    """Return an unopened connection to the target's checked address."""
    return PinnedHTTPS(target) if target.scheme == "https" else PinnedHTTP(target)
