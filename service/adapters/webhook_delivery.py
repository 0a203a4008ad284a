"""Tries to deliver notifications: each signed per Standard Webhooks 1.0 and POSTed to the
address its URL was checked to resolve to, redirects not followed.

A `Delivery` makes the tries of one drain: it reads each game's URL and secret once,
resolves each URL once, and gives each receiver a lane: its notifications in order, over one
kept connection, tried in a thread of a pool shared by up to RECEIVERS_AT_ONCE receivers at
once, which take turns. So a receiver slow to answer, or giving none, holds up its own
notifications only. For UNANSWERED_S after a receiver gave no answer, each of its
notifications is tried alone, on a connection of its own, up to SILENT_AT_ONCE at once on
one asyncio event loop (`Loop`): each try is a request sent (API.md counts tries), and a
silent receiver's many notifications wait one timeout together, not one each. Those beyond that
many, and those of a receiver with LANE_MOST waiting, are not tried now: they go back among
the retries without using one of their tries (`Postponed`). The secret stays in the game's
meta: no log line or error holds it."""

from __future__ import annotations

import asyncio
import resource
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from functools import partial
from types import TracebackType
from typing import Any

from standardwebhooks.webhooks import Webhook

from service.adapters import metrics
from service.adapters.redis_store import RedisEventStore
from service.adapters.webhook_channel import PIPELINE, Channel, Headers, post_alone
from service.adapters.webhook_targets import Refused, Target, resolve

TIMEOUT_S = 5.0
"""A try that has no connection, or no answer's head, within this long failed (API.md)."""
USER_AGENT = "spinner-dominoes-webhooks/1"
RECEIVERS_AT_ONCE = 256
"""Receivers a delivery tries at once, each in a thread of its own (a thread waiting on a
socket costs little: many receivers giving no answer leave room for those that answer)."""
UNANSWERED_S = 15.0
"""How long after a receiver gave no answer its notifications are tried each alone."""
SILENT_AT_ONCE = min(1000, resource.getrlimit(resource.RLIMIT_NOFILE)[0] // 2)
"""Tries at once to receivers that gave no answer lately, each on a socket of its own: a
thousand, or half the sockets the process may open."""
SLICE = PIPELINE
"""Notifications a lane tries in its turn before the other receivers' turns: as many as its
connection writes together."""
LANE_MOST = 100
"""Notifications a receiver may have waiting in its lane; more are postponed (a receiver
slower than its games holds no more of the drain's memory)."""


Notification = list[Any]
"""A notification to try: its game id, webhook-id, payload (JSON), when it was made, and the
delays of the retries it has left."""
Sent = tuple[Notification, str]
"""A notification in its receiver's lane, with the secret that signs it as it is sent."""
Report = Callable[[list[Notification], list[tuple[Notification, "DeliveryFailed"]]], None]
"""Told of notifications tried (or not to be tried: their game gone): all of them, and those
that failed, each with why; called from the lanes' threads, and the lone tries' reporter."""


class DeliveryFailed(Exception):
    """Why a try did not deliver (naming the webhook-id, never the secret): it is retried."""


class Postponed(DeliveryFailed):
    """Why a notification was not tried now: it goes back among the retries, its tries left
    as they were."""


class Delivery:
    """The tries of one drain, sharing game lookups, connections and threads (close it)."""

    def __init__(self, store: RedisEventStore, allow_private: bool, report: Report) -> None:
        self.store, self.allow_private, self.report = store, allow_private, report
        self.games: dict[str, tuple[str, str] | None] = {}
        self.targets: dict[str, Target | Refused] = {}
        self.connections: dict[Target, Channel] = {}
        self.unanswered: dict[Target, float] = {}
        """Receivers that gave no answer, and when."""
        self.lanes: dict[Target, list[Sent]] = {}
        self.lock = threading.Lock()
        self.in_flight = 0
        self.alone = 0
        """Tries under way each alone (to receivers that gave no answer lately)."""
        self.broken: Exception | None = None
        self.pool = ThreadPoolExecutor(RECEIVERS_AT_ONCE, thread_name_prefix="webhooks")
        self.loop: Loop | None = None
        """The lone tries' event loop and its thread, started by the first of them."""
        self.reporter = ThreadPoolExecutor(1, thread_name_prefix="webhooks-reports")
        """Reports the lone tries, so that the loop waits on no Redis command."""

    def __enter__(self) -> Delivery:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Let the lanes' turns under way end, cancel the lone tries under way (their
        notifications are left for the next drain), then close the connections kept open."""
        self.pool.shutdown(wait=True, cancel_futures=True)
        if self.loop is not None:
            self.loop.close()
        self.reporter.shutdown(wait=True)
        for connection in self.connections.values():
            connection.close()
        self.connections.clear()

    def submit(self, notifications: Sequence[Notification]) -> None:
        """Put each notification in its receiver's lane (those refused now, or with no game,
        are reported at once); start the turn of each lane that had none."""
        settled: list[Notification] = []
        failed: list[tuple[Notification, DeliveryFailed]] = []
        for notification in notifications:
            try:
                found = self._route(notification)
            except DeliveryFailed as why:
                failed.append((notification, why))
                continue
            if found is None:
                settled.append(notification)
            elif not self._queue(notification, *found):
                failed.extend(postponed([notification], f"its receiver has {LANE_MOST} waiting"))
        if settled or failed:
            self.report(settled + [n for n, _ in failed], failed)

    def check(self) -> None:
        """Raise what a lane met that was not a receiver's failure (Redis down, say)."""
        if self.broken is not None:
            raise self.broken

    def _queue(self, notification: Notification, target: Target, secret: str) -> bool:
        """Add a notification to its receiver's lane, starting its turn if it had none;
        False if the lane is full."""
        with self.lock:
            lane = self.lanes.get(target)
            if lane is not None and len(lane) >= LANE_MOST:
                return False
            if lane is None:
                lane = self.lanes[target] = []
                self.pool.submit(self._turn, target)
            lane.append((notification, secret))
            self.in_flight += 1
        return True

    def _turn(self, target: Target) -> None:
        """Try up to SLICE of a lane's notifications (each alone if the receiver gave no
        answer lately), report them, and queue the lane's next turn behind the other
        receivers' if more wait."""
        with self.lock:
            lane = self.lanes[target]
            part, lane[:] = lane[:SLICE], lane[SLICE:]
        done: list[Sent] = part  # reported here (the rest report themselves)
        left: list[Sent] = []  # not tried: back to the lane
        try:
            if self._silent(target):
                done = self._try_each_alone(target, part)
            else:
                failed, left = self._post_all(target, part)
                self.report([n for n, _ in part[:len(part) - len(left)]], failed)
        except Exception as error:  # the drain raises it (`check`)
            self.broken = error
        finally:
            with self.lock:
                self.in_flight -= len(done) - len(left)
                lane[:0] = left
                if not lane:
                    del self.lanes[target]
                elif self.broken is None:
                    self.pool.submit(self._turn, target)

    def _silent(self, target: Target) -> bool:
        """Whether the receiver gave no answer within the last UNANSWERED_S."""
        return time.monotonic() - self.unanswered.get(target, -UNANSWERED_S) < UNANSWERED_S

    def _try_each_alone(self, target: Target, part: list[Sent]) -> list[Sent]:
        """Start a try of each notification alone, as many as SILENT_AT_ONCE allows (each
        reports itself); report the rest postponed; return those reported now."""
        with self.lock:
            room = max(0, SILENT_AT_ONCE - self.alone)
            now, later = part[:room], part[room:]
            self.alone += len(now)
            if now and self.loop is None:
                self.loop = Loop()
            loop = self.loop
        for sent in now:
            assert loop is not None
            tried = loop.run(post_alone(target, *request(sent), TIMEOUT_S))
            tried.add_done_callback(partial(self.reporter.submit, self._tried_alone, target, sent))
        if later:
            self.report([n for n, _ in later],
                        postponed([n for n, _ in later], "its receiver gave no answer lately"))
        return later

    def _tried_alone(self, target: Target, sent: Sent, tried: Future[int]) -> None:
        """Report a lone try (on the reporter's thread); an answer ends the receiver's silence.
        One cancelled as the drain closed is not reported: the next drain tries it."""
        try:
            if not tried.cancelled():
                self.report([sent[0]], self._outcome(target, sent, tried))
        except Exception as error:  # the drain raises it (`check`)
            self.broken = error
        finally:
            with self.lock:
                self.alone -= 1
                self.in_flight -= 1

    def _outcome(self, target: Target, sent: Sent, tried: Future[int]
                 ) -> list[tuple[Notification, DeliveryFailed]]:
        """Return a lone try's failure, if it failed."""
        try:
            status = tried.result()
        except OSError as error:  # refused, timed out, TLS, not HTTP
            return [self._no_answer(target, sent[0], error)]
        self.unanswered.pop(target, None)
        return self._outcomes([sent], [status])

    def _route(self, notification: Notification) -> tuple[Target, str] | None:
        """Return where a notification goes and the secret that signs it (when it is sent,
        so that its timestamp is the send's); None if its game is gone or has no URL;
        DeliveryFailed if its URL is refused now."""
        game_id, webhook_id = notification[:2]
        found = self._game(game_id)
        if found is None:
            return None
        url, secret = found
        return self._target(url, webhook_id), secret

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

    def _post_all(self, target: Target, signed: list[Sent]
                  ) -> tuple[list[tuple[Notification, DeliveryFailed]], list[Sent]]:
        """POST the notifications to one target on its kept connection, each signed as it
        goes; return those that got no 2xx or no answer, and those left untried after one
        got no answer (the receiver is then silent; an answer ends its silence)."""
        channel = self.connections.get(target)
        if channel is None:
            channel = self.connections[target] = Channel(target, TIMEOUT_S)
        statuses: list[int] = []
        try:
            channel.post_all([request(sent) for sent in signed], statuses)
        except OSError as error:  # refused, timed out, TLS, not HTTP
            channel.close()
            unanswered = self._no_answer(target, signed[len(statuses)][0], error)
            return [*self._outcomes(signed, statuses), unanswered], signed[len(statuses) + 1:]
        self.unanswered.pop(target, None)
        return self._outcomes(signed, statuses), []

    def _no_answer(self, target: Target, notification: Notification, error: OSError
                   ) -> tuple[Notification, DeliveryFailed]:
        """Count a try that got no answer, mark its receiver silent, and return why."""
        self.unanswered[target] = time.monotonic()
        metrics.WEBHOOK_DELIVERIES.labels("no_answer").inc()
        return notification, DeliveryFailed(
            f"{notification[1]}: no answer: {type(error).__name__}")

    def _outcomes(self, signed: list[Sent], statuses: list[int]
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


class Loop:
    """An asyncio event loop in a thread of its own, for the lone tries."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="webhooks-alone",
                                       daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, int]) -> Future[int]:
        """Start `coroutine` on the loop; return its future."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def close(self) -> None:
        """Cancel what runs on the loop, let it end, then stop the loop and its thread."""
        asyncio.run_coroutine_threadsafe(_cancel_all(), self.loop).result()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


async def _cancel_all() -> None:
    """Cancel every other task of the running loop and wait until each has ended."""
    tasks = asyncio.all_tasks() - {asyncio.current_task()}
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def request(sent: Sent) -> tuple[Headers, bytes]:
    """Return a notification's POST: its headers, made (and signed) as it is sent, and body."""
    notification, secret = sent
    return partial(signed_headers, secret, notification[1], notification[2]), \
        notification[2].encode()


def postponed(notifications: list[Notification], why: str
              ) -> list[tuple[Notification, DeliveryFailed]]:
    """Count as deferred, and return as postponed, notifications not tried now."""
    metrics.WEBHOOK_DELIVERIES.labels("deferred").inc(len(notifications))
    return [(n, Postponed(f"{n[1]}: not tried now: {why}")) for n in notifications]


def signed_headers(secret: str, webhook_id: str, payload: str) -> dict[str, str]:
    """Return a try's headers: JSON, and Standard Webhooks' id, timestamp (now) and
    signature, made by the `standardwebhooks` library."""
    now = datetime.fromtimestamp(int(time.time()), tz=UTC)
    signature = Webhook(secret).sign(msg_id=webhook_id, timestamp=now, data=payload)
    return {"Content-Type": "application/json", "User-Agent": USER_AGENT,
            "webhook-id": webhook_id, "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": signature}
