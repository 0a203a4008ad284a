"""The `spinner` command: serve, worker, verify."""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from service.adapters.settings import Settings
from service.entrypoints import processes

if TYPE_CHECKING:
    from service.entrypoints.redis_server import RedisServer

GRACEFUL_TIMEOUT_S = 10  # in-flight requests and AI turns get this long to finish on Ctrl-C
LOCK_WAIT_S = 15.0
"""How long `spinner serve` waits for its data dir's lock: a serve killed just before may
leave its redis-server stopping (flushing its append-only file) for a few seconds."""


WORKERS = {"worker": "--ai-only", "fast worker": "--fast-only", "notifier": "--notifications-only"}
"""The workers `spinner serve` runs, by name: a greedy or random reply never waits behind an
expert's search, and no AI turn behind a notification's delivery (a receiver may take
seconds to answer, or never)."""
API_CONNECTIONS = 1000
"""Connections each API process serves at once (gevent), open streams (SSE) included."""
API_WORKER_CLASS = "service.entrypoints.gunicorn_worker.ProblemWorker"
"""gunicorn's gevent worker, answering the requests gunicorn cannot read in problem+json."""


def default_api_workers() -> int:
    """Return the API processes to run: two a core. A process runs Python on one core at a
    time (the GIL); while one of its requests waits on Redis, gevent runs another."""
    return 2 * (os.cpu_count() or 1)


def main(argv: list[str] | None = None) -> int:
    """Run the `spinner` command line."""
    parser = argparse.ArgumentParser(prog="spinner", description="Spinner Dominoes service")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve",
                                help="run Redis (unless REDIS_URL), three workers and the API")
    serve.add_argument("--port", type=int, default=8000, help="the API's port (default 8000)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="the address the API listens on (default 127.0.0.1)")
    serve.add_argument("--data-dir", type=Path, default=Path("./var"),
                       help="Redis's data, the lock and the metrics files (default ./var)")
    serve.add_argument("--api-workers", type=int, default=default_api_workers(),
                       help="gunicorn's API processes (default: two a core)")
    worker = commands.add_parser("worker", help="run one rq worker for AI turns and "
                                 "notifications")
    takes = worker.add_mutually_exclusive_group()
    takes.add_argument("--fast-only", action="store_true",
                       help="take only greedy and random AI turns (the fast lane)")
    takes.add_argument("--ai-only", action="store_true", help="take AI turns, no notifications")
    takes.add_argument("--notifications-only", action="store_true",
                       help="take only notifications (webhook deliveries)")
    verify = commands.add_parser("verify", help="check an exported game log offline")
    verify.add_argument("file", type=Path)
    args = parser.parse_args(argv)
    if args.command == "serve":
        return run_serve(args.host, args.port, args.data_dir, args.api_workers)
    if args.command == "worker":
        return run_worker(args.fast_only, args.ai_only, args.notifications_only)
    return run_verify(args.file)


def run_verify(path: Path) -> int:
    """Check an export's hash chain and replay; print the first bad event; 0 when sound."""
    from service.game.audit import audit

    try:
        events = json.loads(path.read_text())["events"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"{path}: not an export ({error})", file=sys.stderr)
        return 2
    finding = audit(events)
    if finding is not None:
        print(f"{path}: FAILED at {finding}", file=sys.stderr)
        return 1
    print(f"{path}: OK, {len(events)} events, hash chain and replay check out")
    return 0


def run_worker(fast_only: bool = False, ai_only: bool = False,
               notifications_only: bool = False) -> int:
    """Work AI turns from the queues (the fast lane first; with `fast_only`, only it), then
    notifications (not with `fast_only` or `ai_only`; with `notifications_only`, only them)
    until stopped."""
    from service.usecases.ai_turns import EXPERT, FAST
    from workers.runner import work

    lanes = () if notifications_only else (FAST,) if fast_only else (FAST, EXPERT)
    work(Settings.from_env(), lanes, notifications=not (fast_only or ai_only))
    return 0


def run_serve(host: str, port: int, data_dir: Path, api_workers: int) -> int:
    """Start Redis (unless REDIS_URL is set), the WORKERS (AI turns; the fast lane alone;
    notifications) and gunicorn; start a worker or Redis again if it dies; stop all on Ctrl-C.

    The workers, gunicorn and redis-server run in process groups of their own: a terminal's
    Ctrl-C reaches only this process, which stops the workers and gunicorn gracefully, then Redis.
    If this process is killed, they get SIGTERM (all are started from its main thread). The
    data dir is locked for as long as this process or its redis-server runs: a second serve
    on it waits LOCK_WAIT_S for the lock, then gives up, so two redis-servers never write
    one append-only file.
    """
    from service.entrypoints.redis_server import RedisServer

    data_dir = data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    lock = processes.claim(data_dir / "serve.lock", LOCK_WAIT_S)
    if lock is None:
        print(f"spinner: {data_dir} is in use by another spinner serve (or by its redis-server, "
              "still stopping)", file=sys.stderr)
        return 1
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(_fresh_dir(data_dir / "metrics"))}
    tie = processes.dies_with_this_process()
    redis_server = None if Settings.from_env().redis_url else RedisServer(
        data_dir / "redis", preexec_fn=tie, pass_fds=(lock.fileno(),))  # it holds the lock too
    stop = _stop_event()
    children: dict[str, subprocess.Popen[bytes]] = {}
    worker = [sys.executable, "-m", "service.entrypoints.cli", "worker"]
    restarts: dict[str, Callable[[], subprocess.Popen[bytes]]] = {
        name: functools.partial(subprocess.Popen, [*worker, flag], env=env, process_group=0,
                                preexec_fn=tie)
        for name, flag in WORKERS.items()}
    try:
        if redis_server is not None:
            env["REDIS_URL"] = redis_server.start().url
            print(f"spinner: redis-server on {redis_server.url} (data in {data_dir / 'redis'})")
            restarts["redis-server"] = redis_server.launch  # loads while the others retry
            children["redis-server"] = _process(redis_server)
        for name in WORKERS:
            children[name] = restarts[name]()
        children["gunicorn"] = subprocess.Popen(
            _gunicorn_command(f"{host}:{port}", api_workers, data_dir), env=env, process_group=0,
            preexec_fn=tie)
        print(f"spinner: API on http://{host}:{port}/v1 (Ctrl-C stops everything)")
        return _supervise(children, stop, restarts)
    finally:
        _stop([child for name, child in children.items() if name != "redis-server"])
        if redis_server is not None:
            redis_server.stop()  # last: it flushes the log the others wrote


def _gunicorn_command(bind: str, api_workers: int, data_dir: Path) -> list[str]:
    """Return the API's gunicorn command line."""
    return [sys.executable, "-m", "gunicorn", "--bind", bind,
            "--worker-class", API_WORKER_CLASS, "--worker-connections", str(API_CONNECTIONS),
            "--workers", str(api_workers), "--graceful-timeout", str(GRACEFUL_TIMEOUT_S),
            "--control-socket", str(data_dir / "gunicorn.ctl"), "service.entrypoints.wsgi:app"]


def _fresh_dir(path: Path) -> Path:
    """Return `path` as an empty directory (the API processes' shared metrics files)."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def _stop_event() -> threading.Event:
    """Return an event that Ctrl-C, SIGTERM or a hang-up sets."""
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda *_: stop.set())
    return stop


def _process(server: RedisServer) -> subprocess.Popen[bytes]:
    """Return a started server's process."""
    assert server.process is not None
    return server.process


def _supervise(children: dict[str, subprocess.Popen[bytes]], stop: threading.Event,
               restarts: dict[str, Callable[[], subprocess.Popen[bytes]]]) -> int:
    """Wait for a stop signal (then 0). A child that exits is started again if `restarts`
    can, as often as it exits (the worker; redis-server, on the same data: until it has
    loaded it, the others get LOADING and retry), else everything stops (then 1; gunicorn
    starts its own workers again itself). A restart that fails is tried again."""
    while not stop.wait(0.5):
        for name, child in list(children.items()):
            if child.poll() is None:
                continue
            again = name in restarts
            print(f"spinner: the {name} exited ({child.returncode}); "
                  f"{'starting it again' if again else 'stopping'}", file=sys.stderr)
            if not again:
                return 1
            if name in WORKERS:  # its rq scheduler, a child of its own, must not run on
                processes.end_group(child)
            try:
                children[name] = restarts[name]()
            except OSError as error:  # e.g. no process could be forked: try on the next tick
                print(f"spinner: could not start the {name}: {error}", file=sys.stderr)
    return 0


def _stop(children: list[subprocess.Popen[bytes]]) -> None:
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    for child in children:
        processes.reap(child, GRACEFUL_TIMEOUT_S + 5)
        processes.end_group(child)  # each leads a group of its own


if __name__ == "__main__":
    sys.exit(main())
