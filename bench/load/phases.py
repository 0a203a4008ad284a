"""The load bench's measured phases: the hello-world ceiling, the floor's steps above it, the
game load, and the audit of the games it played (`spinner verify`)."""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
from pathlib import Path
from typing import Any

from bench.load import notifying
from bench.load.clients import hammer_hello, merged, play_games, run_clients
from bench.load.profiling import start_profilers
from bench.load.report import Phase, percentile
from bench.load.servers import cpu_seconds, gunicorn, worker_pids
from service.entrypoints.cli import main as spinner
from service.entrypoints.redis_server import RedisServer


def measure_hello(env: dict[str, str], args: argparse.Namespace, layout: list[int],
                  log: Path) -> Phase:
    """The ceiling: the same clients GET the hello-world's / for --hello-seconds."""
    return hammered("bench.hello_app:app", "/", 200, "ceiling: hello-world", env, args,
                    layout, log)


FLOOR_GAME_ID = "0" * 16
"""A game id of the service's shape that no game has: its GET is one lookup, then 404."""


def measure_floor(env: dict[str, str], args: argparse.Namespace, layout: list[int],
                  work: Path) -> tuple[Phase, Phase]:
    """The steps between the ceiling and a game request, each hammered as the ceiling is,
    against a real redis-server (AOF, fsync always): the hello-world after one Redis round
    trip (`/redis`), then the service itself answering the GET of a game that does not exist
    (every request's pipeline, a lookup of the game in Redis, a 404 problem)."""
    redis = RedisServer(Path(tempfile.mkdtemp(prefix="redis-", dir=work))).start()
    try:
        floor_env = {**env, "REDIS_URL": redis.url}
        round_trip = hammered("bench.hello_app:app", "/redis", 200,
                              "floor: hello-world + one Redis round trip", floor_env, args,
                              layout, work / "gunicorn-hello.log")
        service = hammered("service.entrypoints.wsgi:app", f"/v1/games/{FLOOR_GAME_ID}", 404,
                           "floor: the service's 404 for an unknown game", floor_env, args,
                           layout, work / "gunicorn-api.log")
    finally:
        redis.stop()
    return round_trip, service


def hammered(app: str, path: str, expected: int, label: str, env: dict[str, str],
             args: argparse.Namespace, layout: list[int], log: Path) -> Phase:
    """Serve `app` by the bench's gunicorn command; the clients GET `path` for
    --hello-seconds (any answer but `expected` is an error); print and return the phase."""
    with gunicorn(app, env, args, log) as (port, master):
        cap = int(args.hello_seconds * 20000)  # requests a thread: a bound never reached
        servers = [master, *worker_pids(master)]
        cpu = cpu_seconds(servers)
        tallies, seconds, _ = run_clients(hammer_hello, [
            lambda start, n=n: (port, n, start, args.hello_seconds, cap, path, expected)
            for n in layout])
        phase = Phase(merged(tallies), seconds, cpu_seconds(servers) - cpu)
    print(f"{label}: {phase.tally.requests} requests in {seconds:.1f} s = "
          f"{phase.per_s:.0f} req/s, p50 {percentile(phase.tally.get_ms, .5):.2f} ms, "
          f"p99 {percentile(phase.tally.get_ms, .99):.2f} ms, errors {phase.tally.errors}; "
          f"cpu a request: gunicorn {phase.cpu_ms(phase.server_cpu_s):.2f} ms, "
          f"clients {phase.cpu_ms(phase.tally.cpu_s):.2f} ms")
    return phase


def measure_games(env: dict[str, str], args: argparse.Namespace, layout: list[int],
                  work: Path, exports: Path, notify: bool = False) -> Phase:
    """The load: a real redis-server and the service under gunicorn; games played to the end.
    With --notify, the service's two workers run too and, if `notify`, every game is notified
    at a receiver on loopback; then the phase ends once every notification is delivered."""
    redis = RedisServer(Path(tempfile.mkdtemp(prefix="redis-", dir=work)),
                        appendonly=not args.no_aof).start()  # each phase's own, empty
    delivered = ""
    try:
        game_env = {**env, "REDIS_URL": redis.url}
        with contextlib.ExitStack() as stack:
            workers = stack.enter_context(notifying.workers(game_env)) if args.notify else []
            url, received, receiver = stack.enter_context(notifying.receiver()) \
                if notify else (None, None, 0)
            helpers = [*workers, *(c for w in workers for c in worker_pids(w)), receiver]
            used = cpu_seconds(helpers)
            phase = play_load(game_env, args, layout, (work, redis.pid or 0), {
                "players": args.players, "hands": args.hands, "exports": str(exports),
                "gzip": args.gzip, "notify": url})
            if received is not None:
                delivered = deliveries(redis.url, received, helpers, used)
    finally:
        redis.stop()
    load = phase.tally
    seconds = phase.seconds
    print(f"games{' (notified)' if notify else ''}: {len(load.finished)}/{args.games} finished, "
          f"{load.moves} moves, "
          f"{load.requests} requests in {seconds:.1f} s = {load.moves / seconds:.0f} moves/s, "
          f"{phase.per_s:.0f} req/s; cpu a request: gunicorn "
          f"{phase.cpu_ms(phase.server_cpu_s):.2f} ms, redis-server "
          f"{phase.cpu_ms(phase.redis_cpu_s):.2f} ms, clients {phase.cpu_ms(load.cpu_s):.2f} ms")
    print(f"while every client was busy (first {phase.busy_seconds:.1f} s): "
          f"{phase.busy_per_s(load.moves_at):.0f} moves/s, {phase.busy_per_s(load.done_at):.0f} "
          f"req/s")
    print(f"answer bodies: {load.received / max(load.requests, 1):.0f} bytes a request on "
          f"the wire")
    print(f"latency: move p50 {percentile(load.move_ms, .5):.2f} ms, "
          f"p99 {percentile(load.move_ms, .99):.2f} ms; state GET "
          f"p50 {percentile(load.get_ms, .5):.2f} ms, p99 {percentile(load.get_ms, .99):.2f} ms")
    if delivered:
        print(delivered)
    return phase


def play_load(env: dict[str, str], args: argparse.Namespace, layout: list[int],
              where: tuple[Path, int], job: dict[str, Any]) -> Phase:
    """Run the service under gunicorn while the clients play `job`'s games; return the phase
    (`where`: the work directory and redis-server's pid, whose CPU time is counted too)."""
    work, redis_pid = where
    with gunicorn("service.entrypoints.wsgi:app", env, args,
                  work / "gunicorn-api.log") as (port, master):
        spies = start_profilers(master, min(args.max_seconds, 30), work) \
            if args.profile else []
        servers, redis_pids = [master, *worker_pids(master)], [redis_pid]
        cpu = cpu_seconds(servers), cpu_seconds(redis_pids)
        tallies, seconds, began = run_clients(play_games, [
            lambda start, n=n, i=i: (port, n, list(range(i, args.games, len(layout))),
                                     job, start, args.max_seconds)
            for i, n in enumerate(layout)])
        phase = Phase(merged(tallies), seconds, cpu_seconds(servers) - cpu[0],
                      cpu_seconds(redis_pids) - cpu[1], began)
        for spy in spies:
            spy.wait(60)
    return phase


def deliveries(redis_url: str, received: Any, helpers: list[int], used: float) -> str:
    """Wait for the notifications queue to drain; say how many the receiver got, when, and
    the CPU time the workers (and their rq schedulers) and the receiver used for each."""
    drained = notifying.drain(redis_url)
    cpu_s = cpu_seconds(helpers) - used
    return (f"notifications: {received.value} delivered to the receiver; the queue "
            + ("did not drain" if drained is None else f"drained {drained:.1f} s after the load")
            + f"; cpu a notification: workers and receiver "
              f"{cpu_s * 1000 / max(received.value, 1):.2f} ms")


def verify_exports(exports: Path) -> int:
    """Run `spinner verify` (service.entrypoints.cli.main) on every export; return how many pass."""
    passed = 0
    for path in sorted(exports.glob("*.json")):
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()) as err:
            code = spinner(["verify", str(path)])
        if code == 0:
            passed += 1
        else:
            print(f"verify failed: {err.getvalue().strip()}")
    return passed

