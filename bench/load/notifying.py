"""The load with turn notifications (webhooks): a receiver on loopback, in a process of its
own, that answers every POST 200 at once and counts them (a lean asyncio server speaking
HTTP/1.1 with keep-alive, as a back end's would, so that its own CPU weighs little on the
machine the service shares with it); the service's two workers, as `spinner serve` runs
them, which deliver the notifications; and the wait for their queue to drain after the
load."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import redis
from rq import Queue
from rq.registry import StartedJobRegistry

from bench import ROOT
from bench.load.servers import HOST
from service.adapters.outbox import DRAIN, Outbox
from service.adapters.webhooks import QUEUE_NAME
from service.entrypoints import processes
from service.entrypoints.redis_server import free_port

LENGTH = re.compile(rb"(?i)\r\ncontent-length:\s*(\d+)")
DRAIN_TIMEOUT_S = 120.0
"""How long the notifications queue may take to drain after the load, at most."""


def receive(port: int, count: Any, ready: Any) -> None:
    """Receiver process: answer every POST 200 (no body) and count it, until terminated."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            while head := await reader.readuntil(b"\r\n\r\n"):
                length = LENGTH.search(head)
                await reader.readexactly(int(length.group(1)) if length else 0)
                with count.get_lock():
                    count.value += 1
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        writer.close()

    async def main() -> None:
        server = await asyncio.start_server(serve, HOST, port)
        ready.set()
        await server.serve_forever()

    asyncio.run(main())


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
        outbox = Outbox(connection)
        while (outbox.waiting() or connection.exists(DRAIN) or queue.count
               or started.count):
            if time.monotonic() - began > timeout_s:
                return None
            time.sleep(0.1)
    return time.monotonic() - began
