"""Tries to deliver notifications: each signed per Standard Webhooks 1.0 and POSTed to the
address its URL was checked to resolve to, redirects not followed.

A `Delivery` makes the tries of one drain: it reads each game's URL and
secret once, resolves each URL once, keeps one connection open to each receiver, and does
not try again, within it, a receiver that gave no answer (its notifications go to their
retries at once, so one receiver that hangs holds a drain up for one timeout, not one a
notification), and tries the receivers at once, each in a thread (so many that hang hold it
up for one timeout too). The secret stays in the game's meta: no log line or error holds
it."""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from types import TracebackType

from standardwebhooks.webhooks import Webhook

from service.adapters import metrics
from service.adapters.redis_store import RedisEventStore
from service.adapters.webhook_channel import Channel
from service.adapters.webhook_targets import Refused, Target, resolve

TIMEOUT_S = 5.0
"""A try that has no connection, or no answer's head, within this long failed (API.md)."""
USER_AGENT = "spinner-dominoes-webhooks/1"
RECEIVERS_AT_ONCE = 32
"""Receivers a delivery tries at once, each in a thread of its own."""


Notification = tuple[str, str, str, float]
"""A notification to try: its game id, webhook-id, payload (JSON) and when it was made."""


class DeliveryFailed(Exception):
    """Why a try did not deliver (naming the webhook-id, never the secret): it is retried.
    Not `tried`: it was not sent (its receiver gave no answer to another), and costs no try."""

    def __init__(self, why: str, tried: bool = True) -> None:
        super().__init__(why)
        self.tried = tried


class Delivery:
    """The tries of one drain, sharing game lookups and connections (close it)."""

    def __init__(self, store: RedisEventStore, allow_private: bool) -> None:
        self.store, self.allow_private = store, allow_private
        self.games: dict[str, tuple[str, str] | None] = {}
        self.targets: dict[str, Target | Refused] = {}
        self.connections: dict[Target, Channel] = {}
        self.unanswered: set[Target] = set()

    def __enter__(self) -> Delivery:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections kept open."""
        for connection in self.connections.values():
            connection.close()
        self.connections.clear()

    def attempt_all(self, notifications: Sequence[Notification]
                    ) -> list[tuple[Notification, DeliveryFailed]]:
        """Try each notification (game id, webhook-id, payload, made at), those to one
        receiver in order and together (`Channel.post_all`), up to RECEIVERS_AT_ONCE
        receivers at once (so receivers that give no answer hold it up for one timeout, not
        one each); return those that failed, each with why."""
        failed: list[tuple[Notification, DeliveryFailed]] = []
        by_target: dict[Target, list[tuple[Notification, dict[str, str]]]] = {}
        for notification in notifications:
            try:
                found = self._signed(notification)
            except DeliveryFailed as why:
                failed.append((notification, why))
                continue
            if found is not None:
                by_target.setdefault(found[0], []).append((notification, found[1]))
        if len(by_target) < 2:  # none (all refused, or their games gone), or no thread needed
            return failed + [f for item in by_target.items() for f in self._post_all(*item)]
        with ThreadPoolExecutor(min(len(by_target), RECEIVERS_AT_ONCE)) as pool:
            for outcome in pool.map(lambda item: self._post_all(*item), by_target.items()):
                failed += outcome
        return failed

    def _signed(self, notification: Notification) -> tuple[Target, dict[str, str]] | None:
        """Return where a notification goes and its signed headers; None if its game is
        gone or has no URL; DeliveryFailed if its URL is refused now."""
        game_id, webhook_id, payload, _ = notification
        found = self._game(game_id)
        if found is None:
            return None
        url, secret = found
        return self._target(url, webhook_id), signed_headers(secret, webhook_id, payload)

    def _game(self, game_id: str) -> tuple[str, str] | None:
        """Return the game's URL and secret, read once; None if it has none (or is gone)."""
        if game_id not in self.games:
            stored = self.store.meta(game_id)
            url, secret = stored.get("notify_url"), stored.get("notify_secret")
            self.games[game_id] = (url, secret) if url and secret else None
        return self.games[game_id]

    def _target(self, url: str, webhook_id: str) -> Target:
        """Return the URL's target, resolved and checked once; DeliveryFailed if refused."""
        if url not in self.targets:
            try:
                self.targets[url] = resolve(url, self.allow_private)
            except Refused as refused:
                self.targets[url] = refused
        found = self.targets[url]
        if isinstance(found, Refused):
            metrics.WEBHOOK_DELIVERIES.labels("blocked").inc()
            raise DeliveryFailed(f"{webhook_id}: not called: {found}")
        return found

    def _post_all(self, target: Target, signed: list[tuple[Notification, dict[str, str]]]
                  ) -> list[tuple[Notification, DeliveryFailed]]:
        """POST the notifications to one target on its kept connection; return those that
        got no 2xx, or no answer (then the target is not tried again in this delivery)."""
        if target in self.unanswered:
            return self._deferred(signed)
        channel = self.connections.get(target)
        if channel is None:
            channel = self.connections[target] = Channel(target, TIMEOUT_S)
        statuses: list[int] = []
        try:
            channel.post_all([(headers, n[2].encode()) for n, headers in signed], statuses)
        except OSError as error:  # refused, timed out, TLS, not HTTP
            channel.close()
            self.unanswered.add(target)
            metrics.WEBHOOK_DELIVERIES.labels("no_answer").inc()
            unanswered = signed[len(statuses)][0]
            why = DeliveryFailed(f"{unanswered[1]}: no answer: {type(error).__name__}")
            return [*self._outcomes(signed, statuses), (unanswered, why),
                    *self._deferred(signed[len(statuses) + 1:])]
        return self._outcomes(signed, statuses)

    @staticmethod
    def _deferred(signed: list[tuple[Notification, dict[str, str]]]
                  ) -> list[tuple[Notification, DeliveryFailed]]:
        """Count as deferred, and return as failed, notifications not tried (their receiver
        gave no answer earlier in this delivery)."""
        metrics.WEBHOOK_DELIVERIES.labels("deferred").inc(len(signed))
        return [(n, DeliveryFailed(f"{n[1]}: not tried: its receiver gave no answer",
                                   tried=False))
                for n, _ in signed]

    def _outcomes(self, signed: list[tuple[Notification, dict[str, str]]], statuses: list[int]
                  ) -> list[tuple[Notification, DeliveryFailed]]:
        """Count each answered notification by its status; return those that got no 2xx."""
        failed = []
        for (notification, _), status in zip(signed, statuses, strict=False):
            if 200 <= status < 300:
                metrics.WEBHOOK_DELIVERIES.labels("delivered").inc()
                metrics.WEBHOOK_SECONDS.observe(max(0.0, time.time() - notification[3]))
            else:
                metrics.WEBHOOK_DELIVERIES.labels("rejected").inc()
                failed.append((notification, DeliveryFailed(
                    f"{notification[1]}: the receiver answered {status}")))
        return failed


def signed_headers(secret: str, webhook_id: str, payload: str) -> dict[str, str]:
    """Return a try's headers: JSON, and Standard Webhooks' id, timestamp (now) and
    signature, made by the `standardwebhooks` library."""
    now = datetime.fromtimestamp(int(time.time()), tz=UTC)
    signature = Webhook(secret).sign(msg_id=webhook_id, timestamp=now, data=payload)
    return {"Content-Type": "application/json", "User-Agent": USER_AGENT,
            "webhook-id": webhook_id, "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": signature}
