"""Faults, nothing lost: a SIGKILLed redis-server and a SIGKILLed gunicorn worker, mid-stream.

(a) redis-server (AOF, fsync always) is killed while client threads stream moves: while it is
down every answer is 503 problem+json; after a restart on the same data dir every move that
was acknowledged is in the log and every game replays.
(b) The one gunicorn worker is killed while moves are in flight over HTTP: afterwards every
acknowledged move is in the log, no move is half-appended (the version is the number of
events, the hash chain and the replay hold) and the games play on to a verified end.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis

from service.adapters.bootstrap import build
from service.adapters.redis_store import RedisEventStore
from service.adapters.settings import Settings
from service.api.app import create_app
from service.entrypoints import processes
from service.entrypoints.cli import API_WORKER_CLASS
from service.entrypoints.redis_server import RedisServer, free_port
from service.game.audit import audit
from tests.api.driver import auth, create
from tests.workers import wait_until

ROOT = Path(__file__).resolve().parents[2]
ACTION_EVENT = {"play": "tile_played", "draw": "tile_drawn", "pass": "passed"}
PLAY_DEADLINE_S = 40.0
HIGH = 10**6  # rate limits stay on but are never reached by these few hundred requests

# A request: (method, path, body or None, token or None) -> (status, content type, json, headers)
Send = Callable[[str, str, Any, "str | None"], tuple[int, str, Any, dict[str, str]]]


@dataclass
class Ack:
    """A move the server answered 200 to: it must be in the log at seq `before + 1`."""

    game_id: str
    seat: int
    move: dict[str, Any]
    before: int
    after: int


@dataclass
class Record:
    """What the client threads saw, under one lock."""

    acks: list[Ack] = field(default_factory=list)
    failures: list[tuple[int, str, Any, dict[str, str]]] = field(default_factory=list)
    finished: set[str] = field(default_factory=set)
    crashed: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self) -> int:
        """Return how many moves were acknowledged so far."""
        with self.lock:
            return len(self.acks)


def play(send: Send, game_id: str, tokens: dict[int, str], seed: int, record: Record,
         deadline: float) -> None:
    """Play random legal moves for every seat until the end, riding out failed requests."""
    rng, turn, path = random.Random(seed), 0, f"/v1/games/{game_id}"
    try:
        while time.monotonic() < deadline:
            status, kind, view, headers = send("GET", path, None, tokens[turn])
            if status != 200:
                _failed(record, status, kind, view, headers)
                continue
            if view["status"] == "finished":
                with record.lock:
                    record.finished.add(game_id)
                return
            if view["turn"] != turn:
                turn = view["turn"]
                continue
            move = rng.choice(view["legal_moves"])
            status, kind, answer, headers = send("POST", f"{path}/moves", move, tokens[turn])
            if status != 200:
                _failed(record, status, kind, answer, headers)
                continue
            with record.lock:
                record.acks.append(Ack(game_id, turn, move, view["version"], answer["version"]))
    except Exception as error:  # the thread hands it to the test, which fails on it
        with record.lock:
            record.crashed.append(repr(error))


def _failed(record: Record, status: int, kind: str, body: Any, headers: dict[str, str]) -> None:
    with record.lock:
        record.failures.append((status, kind, body, headers))
    time.sleep(0.02)


def run_players(send_for: Callable[[], Send], games: dict[str, dict[int, str]],
                record: Record) -> list[threading.Thread]:
    """Start one thread per game, each with its own connection (from `send_for`)."""
    deadline = time.monotonic() + PLAY_DEADLINE_S
    threads = [threading.Thread(target=play, args=(send_for(), game_id, tokens, seed, record,
                                                    deadline))
               for seed, (game_id, tokens) in enumerate(games.items())]
    for thread in threads:
        thread.start()
    return threads


def wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll `condition` until it holds, or fail the test naming `what`."""
    assert wait_until(condition, timeout_s), f"timed out waiting for {what}"


def check_log(store: RedisEventStore, record: Record, games: dict[str, dict[int, str]]) -> None:
    """Every game ended and audits clean, in one piece; every acknowledged move is logged."""
    assert not record.crashed, record.crashed
    assert record.finished == set(games)
    logs = {game_id: store.read(game_id) for game_id in games}
    for game_id, log in logs.items():
        assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
        assert store.version(game_id) == len(log)
        assert log[-1]["type"] == "game_ended"
        assert audit(log) is None, f"{game_id}: {audit(log)}"
    for ack in record.acks:
        event = logs[ack.game_id][ack.before]  # seq before + 1
        assert (event["seat"], event["type"]) == (ack.seat, ACTION_EVENT[ack.move["action"]])
        if ack.move["action"] == "play":
            assert (event["data"]["tile"], event["data"]["end"]) == \
                (ack.move["tile"], ack.move["end"])
        assert ack.before < ack.after <= len(logs[ack.game_id])


# ---------------------------------------------------------------- (a) redis-server SIGKILL

def test_acknowledged_moves_survive_a_redis_sigkill(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis").start()  # AOF, fsync always
    services = build(Settings(redis_url=server.url, rate_limit_per_address=HIGH,
                              rate_limit_per_token=HIGH))
    app = create_app({"TESTING": True}, services=services)
    setup = app.test_client()
    games = dict(create(setup, seats=2, hands=1, seed=seed) for seed in range(4))
    record = Record()

    def send_for() -> Send:
        client = app.test_client()

        def send(method: str, path: str, body: Any, token: str | None) -> tuple[
                int, str, Any, dict[str, str]]:
            answer = client.open(path, method=method, json=body,
                                 headers=auth(token) if token else {})
            return answer.status_code, answer.mimetype, answer.json, dict(answer.headers)
        return send

    threads = run_players(send_for, games, record)
    restarted = None
    try:
        wait_for(lambda: record.count() >= 40, 20, "40 acknowledged moves")
        server.kill()
        acked_before_kill = record.count()
        wait_for(lambda: len(record.failures) >= 8, 10, "answers while Redis is down")
        assert setup.get("/healthz").status_code == 503
        restarted = RedisServer(tmp_path / "redis", port=server.port).start()
        for thread in threads:
            thread.join(PLAY_DEADLINE_S + 5)
    finally:
        for running in (restarted, server):
            if running is not None:
                running.stop()
        services.store.client.close()
        services.queue.connection.close()
    assert record.failures, "Redis was killed, yet no request failed"
    for status, kind, body, headers in record.failures:
        assert (status, kind, body["status"]) == (503, "application/problem+json", 503)
        assert headers.get("Retry-After") == "1" and "Traceback" not in json.dumps(body)
    assert acked_before_kill < record.count(), "no move landed after the restart"
    with RedisServer(tmp_path / "redis", port=server.port) as again, \
            redis.Redis.from_url(again.url) as client:  # everything again, from disk
        check_log(RedisEventStore(client), record, games)


# ---------------------------------------------------------------- (b) gunicorn worker SIGKILL

class HttpSend:
    """A keep-alive connection to the gunicorn under test; status 0 when no answer came."""

    def __init__(self, port: int, dropped: list[int], lock: threading.Lock) -> None:
        self.port, self.dropped, self.lock = port, dropped, lock
        self.conn: http.client.HTTPConnection | None = None

    def __call__(self, method: str, path: str, body: Any,
                 token: str | None) -> tuple[int, str, Any, dict[str, str]]:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        headers |= auth(token) if token else {}
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
            self.conn.request(method, path, None if body is None else json.dumps(body),
                              headers)
            answer = self.conn.getresponse()
            data = answer.read()
        except (OSError, http.client.HTTPException):
            if self.conn is not None:
                self.conn.close()
                self.conn = None
            with self.lock:
                self.dropped.append(1)
            time.sleep(0.05)
            return 0, "", None, {}
        kind = answer.getheader("Content-Type", "").split(";")[0]
        return answer.status, kind, json.loads(data) if data else None, dict(answer.getheaders())

    def close(self) -> None:
        """Drop the connection."""
        if self.conn is not None:
            self.conn.close()


def children(pid: int) -> list[int]:
    """Return the pids of the live children of process `pid` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


@pytest.fixture
def gunicorn(redis_url: str) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """A real gunicorn with one worker of `spinner serve`'s class serving the app; yield its
    port and master."""
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "PYTHONPATH": str(ROOT),
           "RATE_LIMIT_PER_ADDRESS": str(HIGH), "RATE_LIMIT_PER_TOKEN": str(HIGH)}
    master = subprocess.Popen([sys.executable, "-m", "gunicorn", "--workers", "1",
                               "--worker-class", API_WORKER_CLASS,
                               "--bind", f"127.0.0.1:{port}", "service.entrypoints.wsgi:app"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: _healthy(port), 30, "gunicorn to answer /healthz")
        yield port, master
    finally:
        processes.stop(master, 15)


def _healthy(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", "/healthz")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


def test_a_sigkilled_worker_leaves_no_half_appended_move(
        gunicorn: tuple[int, subprocess.Popen[bytes]], redis_url: str) -> None:
    port, master = gunicorn
    dropped: list[int] = []
    lock = threading.Lock()
    setup = HttpSend(port, dropped, lock)
    games = {}
    for seed in range(6):
        players = [{"name": f"P{s}", "kind": "human"} for s in range(2)]
        status, _, created, _ = setup("POST", "/v1/games",
                                      {"players": players, "rules": {"hands": 1}, "seed": seed},
                                      None)
        assert status == 201, created
        games[created["game_id"]] = {s["seat"]: s["token"] for s in created["seats"]}
    setup.close()
    record = Record()
    senders: list[HttpSend] = []

    def send_for() -> Send:
        senders.append(HttpSend(port, dropped, lock))
        return senders[-1]

    (worker,) = children(master.pid)
    threads = run_players(send_for, games, record)
    wait_for(lambda: record.count() >= 30, 20, "30 acknowledged moves")
    os.kill(worker, signal.SIGKILL)
    wait_for(lambda: children(master.pid) not in ([], [worker]), 20, "a new worker")
    for thread in threads:
        thread.join(PLAY_DEADLINE_S + 5)
    for sender in senders:
        sender.close()
    assert dropped, "the worker was killed, yet no request was cut off"
    assert all(status == 0 for status, *_ in record.failures), record.failures[:3]
    with redis.Redis.from_url(redis_url) as client:
        store = RedisEventStore(client)
        check_log(store, record, games)
        for game_id in games:
            assert store.version(game_id) == len(store.read(game_id))  # stream or compact
