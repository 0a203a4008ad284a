"""Prometheus metrics of the service, kept apart from Flask; the use cases count through
`PrometheusMeter`, their `Meter` port.

Under gunicorn each worker process counts on its own: set PROMETHEUS_MULTIPROC_DIR to an
empty directory that all of them (and any rq worker to be counted) can write, before they
start, and `/metrics` then adds up every process's files (prometheus_client multiprocess mode).
Unset, each process exposes only its own counts.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager

import redis
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector
from rq import Queue

from service.adapters.turn_queue import pending_clocks

HTTP_REQUESTS = Counter("spinner_http_requests", "HTTP requests answered, by route and status",
                        ["method", "route", "status"])
HTTP_SECONDS = Histogram("spinner_http_request_duration_seconds",
                         "Time to answer an HTTP request (to the response head), by route",
                         ["route"])
MOVES = Counter("spinner_moves", "Moves answered, by outcome: accepted or rejected_<status>",
                ["outcome"])
APPEND_CONFLICTS = Counter("spinner_append_conflicts",
                           "Appends that lost a race to another append (ConcurrencyError)")
TURNS_NOT_QUEUED = Counter("spinner_ai_turns_not_queued",
                           "AI turns not queued after their append (a read or the sweep heals)")
TIMEOUTS_FIRED = Counter("spinner_turn_timeouts",
                         "Turn clocks that ran out: a turn_timed_out and the move made for it")
REPLAY_SECONDS = Histogram("spinner_replay_seconds",
                           "Time to load a game and replay it from its latest snapshot",
                           buckets=(.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5))
WEBHOOK_DELIVERIES = Counter(
    "spinner_webhook_deliveries",
    "Tries to deliver a notification (webhook), by outcome: delivered (a 2xx), rejected (any "
    "other answer, a redirect too), no_answer (refused, timed out, TLS failed), deferred (not "
    "tried: its receiver gave no answer earlier in the same drain, or had 100 waiting; retried "
    "later), blocked "
    "(its host did not resolve, or resolved to an address that is not public), not_queued "
    "(it could not be put in the outbox); and given_up, besides its outcome, for a try that "
    "was a notification's last",
    ["outcome"])
WEBHOOK_SECONDS = Histogram(
    "spinner_webhook_delivery_seconds",
    "Time from a notification's append to its delivery (a 2xx answer), retries included",
    buckets=(.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200))


class PrometheusMeter:
    """The use cases' meter: loads into `spinner_replay_seconds`, lost races into
    `spinner_append_conflicts`, AI turns not queued into `spinner_ai_turns_not_queued`,
    timeouts into `spinner_turn_timeouts`."""

    def replay_timer(self) -> AbstractContextManager[object]:
        """Return a context that observes its duration in REPLAY_SECONDS."""
        return REPLAY_SECONDS.time()

    def append_conflict(self) -> None:
        """Count one lost append race in APPEND_CONFLICTS."""
        APPEND_CONFLICTS.inc()

    def turn_not_queued(self) -> None:
        """Count one AI turn not queued after its append in TURNS_NOT_QUEUED."""
        TURNS_NOT_QUEUED.inc()

    def timeout_fired(self) -> None:
        """Count one turn clock that ran out in TIMEOUTS_FIRED."""
        TIMEOUTS_FIRED.inc()


class QueueCollector(Collector):
    """The AI-turn queues' depth and failed jobs (both lanes) and the turn clocks waiting for
    their deadline, read from Redis at scrape time."""

    def __init__(self, *queues: Queue) -> None:
        self.queues = queues

    def collect(self) -> Iterator[Metric]:
        """Yield both gauges; none while the queue's Redis cannot be reached."""
        try:
            depth = sum(queue.count for queue in self.queues)
            failed = sum(queue.failed_job_registry.count for queue in self.queues)
            clocks = sum(pending_clocks(queue) for queue in self.queues)
        except redis.RedisError:
            return
        yield GaugeMetricFamily("spinner_ai_queue_depth", "AI turn jobs waiting in the queue",
                                value=depth)
        yield GaugeMetricFamily("spinner_ai_failed_jobs", "AI turn jobs in rq's failed registry",
                                value=failed)
        yield GaugeMetricFamily("spinner_turn_clocks_pending",
                                "Turn clocks scheduled and waiting for their deadline",
                                value=clocks)


def exposition(queues: Iterable[Queue], accept: str) -> tuple[bytes, str]:
    """Return every metric in the format the Accept header asks for, and its content type."""
    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.MultiProcessCollector(registry)
    else:
        registry.register(REGISTRY)
    registry.register(QueueCollector(*queues))
    encode, content_type = choose_encoder(accept)
    return encode(registry), content_type
