"""The load with turn notifications (webhooks): a receiver on loopback, in a process of its
own, that answers every POST 200 at once and counts them; the service's two workers, as
`spinner serve` runs them, which deliver the notifications; and the wait for their queue to
drain after the load."""

from __future__ import annotations

import contextlib
import multiprocessing
import subprocess
import sys
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import redis
from rq import Queue
from rq.registry import StartedJobRegistry

from bench import ROOT
from bench.load.servers import HOST
from service.adapters.webhooks import OUTBOX, QUEUE_NAME
from service.entrypoints import processes
from service.entrypoints.redis_server import free_port

DRAIN_TIMEOUT_S = 120.0
"""How long the notifications queue may take to drain after the load, at most."""


def receive(port: int, count: Any, ready: Any) -> None:
    """Receiver process: answer every POST 200 (no body) and count it, until terminated."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            """Read the body, count it, answer 200."""
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with count.get_lock():
                count.value += 1
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_: Any) -> None:
            """Log nothing."""

    server = ThreadingHTTPServer((HOST, port), Handler)
    server.daemon_threads = True
    ready.set()
    server.serve_forever()


@contextlib.contextmanager
def receiver() -> Iterator[tuple[str, Any, int]]:
    """Run the receiver until the block ends; yield its URL, its count of POSTs and its pid."""
    context = multiprocessing.get_context("spawn")
    port, count, ready = free_port(), context.Value("q", 0), context.Event()
    process = context.Process(target=receive, args=(port, count, ready), daemon=True)
    process.start()
    try:
        if not ready.wait(30):
            raise RuntimeError("the webhook receiver did not start")
        yield f"http://{HOST}:{port}/hooks", count, process.pid or 0
    finally:
        process.terminate()
        process.join(5)


@contextlib.contextmanager
def workers(env: dict[str, str]) -> Iterator[list[int]]:
    """Run the two workers `spinner serve` runs (one of them for the fast lane only) until
    the block ends; yield their pids. Both deliver notifications."""
    command = [sys.executable, "-m", "service.entrypoints.cli", "worker"]
    started = [subprocess.Popen(flags, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
               for flags in (command, [*command, "--fast-only"])]
    try:
        yield [process.pid for process in started]
    finally:
        for process in started:
            processes.stop(process, 15)


def drain(redis_url: str, timeout_s: float = DRAIN_TIMEOUT_S) -> float | None:
    """Wait until no notification waits in the outbox, is queued or is being tried; return
    the seconds it took (None: not within `timeout_s`)."""
    began = time.monotonic()
    with redis.Redis.from_url(redis_url) as connection:
        queue = Queue(QUEUE_NAME, connection=connection)
        started = StartedJobRegistry(queue=queue)
        while connection.llen(OUTBOX) or queue.count or started.count:
            if time.monotonic() - began > timeout_s:
                return None
            time.sleep(0.1)
    return time.monotonic() - began
