"""The composition root: the one place where settings become connections and services."""

from __future__ import annotations

import time
from dataclasses import dataclass

import redis
from redis.backoff import ExponentialBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry

from service.adapters.ai_ledger import RedisAiLedger
from service.adapters.deck_secret import DeckSecret
from service.adapters.logs import utc_millis
from service.adapters.metrics import PrometheusMeter
from service.adapters.rate_counter import RedisRateCounter
from service.adapters.redis_store import NOT_NOW, RedisEventStore
from service.adapters.settings import Settings
from service.adapters.turn_queue import RqTurnQueue
from service.adapters.webhooks import RqNotifier
from service.usecases.ai_caps import AiCaps, Limits
from service.usecases.decks import Dealer
from service.usecases.games import Games


@dataclass
class Services:
    """What the API and the workers share."""

    settings: Settings
    store: RedisEventStore
    queue: RqTurnQueue
    games: Games
    rate_counter: RedisRateCounter
    notifier: RqNotifier

    def unavailable(self) -> str | None:
        """Name the part that cannot serve now, `store` (it cannot take writes), `full` (the
        store is out of memory) or `queue` (the AI queue's Redis does not answer a PING);
        None while both can."""
        refusal = self.store.write_refusal()
        if refusal is not None:
            return refusal
        try:
            self.queue.connection.ping()
        except NOT_NOW:
            return "queue"
        return None


def utc_now() -> str:
    """Return the current time in RFC 3339, UTC, to the millisecond (`...T03:40:00.123Z`)."""
    return utc_millis(time.time(), "Z")


CLUSTER_SCHEME = "redis+cluster://"
"""How a REDIS_URL names a Redis Cluster (by any one of its masters)."""
REDIS_CONNECTIONS = 2048
"""Connections a process may open to one Redis (redis-py's default is 100): one for each
command in flight, and a gevent API process serves up to 1000 connections at once, an open
stream waiting on Redis in each."""


STORE_TIMEOUT_S = 3.0
"""How long the store's client waits for a reply (an fsync-always append takes
milliseconds): a Redis that accepts but does not answer (stopped, partitioned) gets 503 after
this, once; a command that timed out is not sent again, a lost connection is."""


def connect(url: str, socket_timeout: float = 10.0,
            retried: tuple[type[Exception], ...] = (redis.ConnectionError, redis.TimeoutError)
            ) -> redis.Redis:
    """Return a client for `url` that gives up fast when Redis is down (then: 503), retrying
    a command twice on the `retried` errors."""
    return redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=socket_timeout,
                                max_connections=REDIS_CONNECTIONS,
                                retry=Retry(ExponentialBackoff(cap=0.2, base=0.02), 2,
                                            supported_errors=retried))


def connect_store(url: str) -> redis.Redis:
    """Return the store's client: for `redis+cluster://host:port` (any one node) a Redis
    Cluster client, which connects at once to learn the slot map; else `connect(url)`."""
    if not url.startswith(CLUSTER_SCHEME):
        return connect(url, STORE_TIMEOUT_S, (redis.ConnectionError,))
    cluster = RedisCluster.from_url("redis://" + url.removeprefix(CLUSTER_SCHEME),
                                    socket_connect_timeout=2, socket_timeout=STORE_TIMEOUT_S,
                                    max_connections=REDIS_CONNECTIONS)
    return cluster  # type: ignore[return-value]  # the store uses the commands both share


def build(settings: Settings) -> Services:
    """Wire the store, the queues (AI turns, notifications) and the clock; nothing connects
    until first used (but a cluster store's client, which reads the slot map as it is made)."""
    if not settings.redis_url:
        raise RuntimeError("REDIS_URL is not set: run `spinner serve`, or point it at a Redis")
    if settings.redis_url.startswith(CLUSTER_SCHEME) and not settings.queue_redis_url:
        raise RuntimeError("a cluster store needs QUEUE_REDIS_URL: rq runs on one plain Redis")
    client = connect_store(settings.redis_url)
    store = RedisEventStore(client, idempotency_ttl_s=settings.idempotency_ttl_s,
                            idempotency_keys_per_seat=settings.idempotency_keys_per_seat,
                            unplayed_game_ttl_s=settings.unplayed_game_ttl_s)
    queue_conn = connect(settings.queue_redis_url or settings.redis_url)
    queue = RqTurnQueue(queue_conn, settings)
    dealer = Dealer(settings.seeded_games, DeckSecret(client, settings.deck_secret))
    notifier = RqNotifier(queue_conn, store, settings)
    games = Games(store, queue, utc_now, PrometheusMeter(), dealer, ai_caps(settings, queue_conn),
                  notifier)
    return Services(settings, store, queue, games, RedisRateCounter(store), notifier)


def ai_caps(settings: Settings, queue_conn: redis.Redis) -> AiCaps:
    """Return the caps of each kind of client, counted in the queue's Redis. A queued turn
    stops counting once its job has had all its tries (failed for good)."""
    stale_s = settings.ai_job_timeout_s * (settings.ai_job_retries + 1) + settings.ai_stuck_after_s
    return AiCaps(RedisAiLedger(queue_conn, stale_s),
                  anonymous=Limits(settings.ai_games_per_client, settings.ai_turns_per_client),
                  keyed=Limits(settings.ai_games_per_key, settings.ai_turns_per_key),
                  idle_s=settings.ai_idle_game_s)
