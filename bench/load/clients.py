"""The load's clients: keep-alive HTTP connections in threads in several processes, and what
they measure (`Tally`). They play games to the end, or hammer the hello-world's `/`."""

from __future__ import annotations

import collections
import http.client
import json
import multiprocessing
import random
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from bench.load.servers import HOST

MAX_ERRORS_PER_GAME = 20


class Client:
    """A keep-alive HTTP/1.1 connection to 127.0.0.1 that reconnects after a failure."""

    def __init__(self, port: int, gzip: bool = False) -> None:
        self.port = port
        self.conn: http.client.HTTPConnection | None = None
        self.received = 0  # answer bytes as they came over the wire (before any gunzip)
        self.accept = {"Accept": "application/json"}
        if gzip:  # as a browser or a mobile app would: take gzip, and decode what came so
            self.accept["Accept-Encoding"] = "gzip"

    def request(self, method: str, path: str, body: Any = None, token: str | None = None,
                version: int | None = None) -> tuple[int, Any, float]:
        """Send one request (with If-Match if `version` is given); return (status, decoded JSON
        or None, seconds). Status 0: no answer."""
        headers = dict(self.accept)
        if version is not None:
            headers["If-Match"] = f'"{version}"'
        payload = None
        if body is not None:
            payload = orjson.dumps(body)
            headers["Content-Type"] = "application/json"
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        start = time.perf_counter()
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(HOST, self.port, timeout=30)
            self.conn.request(method, path, payload, headers)
            answer = self.conn.getresponse()
            data = answer.read()
            self.received += len(data)
            if answer.getheader("Content-Encoding") == "gzip":
                data = zlib.decompress(data, wbits=31)
            status = answer.status
        except (OSError, http.client.HTTPException):
            self.close()
            return 0, None, time.perf_counter() - start
        elapsed = time.perf_counter() - start
        try:
            decoded = orjson.loads(data) if data else None
        except ValueError:
            decoded = None
        return status, decoded, elapsed

    def close(self) -> None:
        """Drop the connection."""
        if self.conn is not None:
            self.conn.close()
            self.conn = None


@dataclass
class Tally:
    """What one client process measured."""

    requests: int = 0
    moves: int = 0
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    move_ms: list[float] = field(default_factory=list)
    get_ms: list[float] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)
    done_at: list[float] = field(default_factory=list)  # when each move and view answered
    moves_at: list[float] = field(default_factory=list)  # when each move answered
    drained_at: list[float] = field(default_factory=list)  # when each thread found no game left
    cpu_s: float = 0.0
    received: int = 0  # answer body bytes over the wire

    def add(self, other: Tally) -> None:
        """Add another tally's counts and samples to this one."""
        for name in ("requests", "moves", "errors", "cpu_s", "received"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("error_samples", "move_ms", "get_ms", "finished", "done_at", "moves_at",
                     "drained_at"):
            getattr(self, name).extend(getattr(other, name))

    def answered(self, is_move: bool, seconds: float) -> None:
        """Count one answered request of the game load (a move or a view), with its time."""
        now = time.perf_counter()
        self.requests += 1
        self.done_at.append(now)
        if is_move:
            self.moves += 1
            self.moves_at.append(now)
        (self.move_ms if is_move else self.get_ms).append(seconds * 1000)

    def error(self, what: str) -> None:
        """Count one error answer (or no answer), keeping a few samples."""
        self.errors += 1
        if len(self.error_samples) < 10:
            self.error_samples.append(what)


def play_games(port: int, threads: int, indices: list[int], job: dict[str, Any],
               start: Any, deadline_s: float) -> Tally:
    """Client process: `threads` threads each take the next game of `indices` and play it."""
    tally, lock = Tally(), threading.Lock()
    todo = collections.deque(indices)
    start.wait()
    cpu = time.process_time()
    deadline = time.monotonic() + deadline_s

    def take() -> int | None:
        with lock:
            return todo.popleft() if todo else None

    def run() -> None:
        client, mine = Client(port, job["gzip"]), Tally()
        while time.monotonic() < deadline and (index := take()) is not None:
            play_one(client, index, job, mine, deadline)
        mine.drained_at.append(time.perf_counter())
        mine.received = client.received
        client.close()
        with lock:
            tally.add(mine)

    in_threads(threads, run)
    tally.error_samples = tally.error_samples[:10]
    tally.cpu_s = time.process_time() - cpu
    return tally


def play_one(client: Client, index: int, job: dict[str, Any], tally: Tally,
             deadline: float) -> None:
    """Create game `index`, play random legal moves for every seat to the end, save its export."""
    rng = random.Random(index)
    players = [{"name": f"P{s}", "kind": "human"} for s in range(job["players"])]
    body = {"players": players, "rules": {"hands": job["hands"], "opening": "draw"},
            "seed": index}
    if job.get("notify"):
        body["notify"] = {"url": job["notify"]}
    status, created, _ = client.request("POST", "/v1/games", body)
    tally.requests += 1
    if status != 201:
        tally.error(f"create: {status} {created}")
        return
    game_id = created["game_id"]
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    path = f"/v1/games/{game_id}"
    turn, status_text, errors = None, "playing", 0
    while status_text == "playing" and time.monotonic() < deadline:
        if errors > MAX_ERRORS_PER_GAME:
            return
        view = ask(client, tally, False, "GET", path, token=tokens.get(turn, tokens[0]))
        if view is None:
            errors += 1
            continue
        status_text = view["status"]
        if status_text != "playing":
            break
        if view["turn"] != turn:  # the first look, or someone else's turn: look as that seat
            turn = view["turn"]
            continue
        move = rng.choice(view["legal_moves"])
        answer = ask(client, tally, True, "POST", f"{path}/moves", move, tokens[turn],
                     view["version"])
        if answer is None:
            errors += 1
            continue
        turn, status_text = answer["turn"], answer["status"]
    if status_text != "finished":
        return
    status, export, _ = client.request("GET", f"{path}/export")  # not timed: it is the audit
    if status != 200:
        tally.error(f"export: {status} {export}")
        return
    (Path(job["exports"]) / f"{game_id}.json").write_text(json.dumps(export))
    tally.finished.append(game_id)


def ask(client: Client, tally: Tally, is_move: bool, method: str, path: str, body: Any = None,
        token: str | None = None, version: int | None = None) -> Any:
    """Send one timed request of the game load and count it; return its answer (None: an
    error answer, or none)."""
    status, answer, seconds = client.request(method, path, body, token, version)
    if status != 200:
        tally.requests += 1
        tally.error(f"{'move' if is_move else 'get'}: {status} {answer}")
        return None
    tally.answered(is_move, seconds)
    return answer


def hammer_hello(port: int, threads: int, start: Any, seconds: float,
                 max_requests: int, path: str = "/", expected: int = 200) -> Tally:
    """Client process: `threads` threads GET `path` for `seconds` (at most max_requests
    each); an answer other than `expected` is an error."""
    tally, lock = Tally(), threading.Lock()
    start.wait()
    cpu = time.process_time()
    deadline = time.monotonic() + seconds

    def run() -> None:
        client, mine = Client(port), Tally()
        for _ in range(max_requests):
            if time.monotonic() >= deadline:
                break
            status, _, elapsed = client.request("GET", path)
            mine.requests += 1
            if status == expected:
                mine.get_ms.append(elapsed * 1000)
            else:
                mine.error(f"hello: {status}")
        client.close()
        with lock:
            tally.add(mine)

    in_threads(threads, run)
    tally.cpu_s = time.process_time() - cpu
    return tally


def in_threads(count: int, run: Any) -> None:
    """Run `run()` in `count` threads at once and wait until every one has returned."""
    workers = [threading.Thread(target=run) for _ in range(count)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def run_clients(target: Any, per_process: list[Any]) -> tuple[list[Tally], float, float]:
    """Run `target` in one client process per entry, all let go at once; return the tallies,
    the seconds and the perf_counter when they were let go (the same clock in every process).

    Each entry is a function of the shared start event that returns the target's arguments;
    the clock runs from the moment every process is let go until the last one is done.
    """
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        start = manager.Event()
        with context.Pool(len(per_process)) as pool:
            pending = [pool.apply_async(target, call(start)) for call in per_process]
            time.sleep(1.0)  # let every process import and reach the start line
            began = time.perf_counter()
            start.set()
            tallies = [p.get(timeout=3600) for p in pending]
            elapsed = time.perf_counter() - began
    return tallies, elapsed, began


def merged(tallies: list[Tally]) -> Tally:
    """Add the client processes' tallies up."""
    total = Tally()
    for tally in tallies:
        total.add(tally)
    return total


def split(total: int, parts: int) -> list[int]:
    """Split `total` clients over `parts` processes as evenly as possible."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]

