"""A bounded chaos test (issue 16, point 6): `spinner serve` under load while its processes die.

Client threads play 2- to 4-seat games (some seats AI) over HTTP, every move with If-Match and
an Idempotency-Key, sending the very same request again after a short pause on a connection
error, a timeout, a 503 or a 409 for its key still being handled. Meanwhile a seeded rng
SIGKILLs, every 2-3.5 s, one of serve's redis-server, a gunicorn worker or the rq worker.
Then the killing stops, the games get a bounded time to end, and the answers are held
against the logs: every acknowledged move is in its log exactly once at the version its
answer named, every game ends and its export verifies, no 5xx but 503 (problem+json,
Retry-After) was ever answered, and no move was refused.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from service.entrypoints.redis_server import free_port
from service.game.audit import audit
from tests.support.serve import alive, own_redis_env, process_tree

SEED = int(os.environ.get("CHAOS_SEED", "16"))  # the summary names it: set it to replay a run
CLIENTS = 10
CHAOS_S = 35.0  # how long processes are killed
KILL_EVERY_S = (2.0, 3.5)
FINISH_S = 40.0  # then, how long the games left get to end
HTTP_TIMEOUT_S = 15.0
RETRY_PAUSE_S = (0.1, 0.3)
KEY_PENDING = "409 key pending"
POLL_S = 0.05  # a client waiting for an AI seat reads the game this often
START_S = 30.0
STOP_S = 25.0
HIGH = 10**6  # rate limits stay on (their counter is on the request's path) but are never hit
SETTINGS = {"AI_BUDGET_S": "0.05", "AI_STUCK_AFTER_S": "3", "AI_SWEEP_EVERY_S": "1",
            "RATE_LIMIT_PER_ADDRESS": str(HIGH), "RATE_LIMIT_PER_TOKEN": str(HIGH),
            "AI_GAMES_PER_CLIENT": str(HIGH), "AI_TURNS_PER_CLIENT": str(HIGH)}
VICTIMS = ("redis-server", "gunicorn worker", "rq worker")
ACTION_EVENT = {"play": "tile_played", "draw": "tile_drawn", "pass": "passed"}
CHOICES = {"tile_played", "passed", "turn_timed_out", "seat_left"}  # and a drawn tile (R16)
JSON_HEADERS = {"Content-Type": "application/json"}


@dataclass(frozen=True)
class Answer:
    """One HTTP answer: status, media type, JSON body (None if none) and lower-cased headers."""

    status: int
    kind: str
    body: Any
    headers: dict[str, str]

    def label(self) -> str:
        """Name the answer for the summary: its status, and for a 409 which one it is."""
        if self.status != 409 or not isinstance(self.body, dict):
            return str(self.status)
        detail = str(self.body.get("detail", ""))
        return KEY_PENDING if "Idempotency-Key" in detail else f"409 {detail}"


@dataclass
class Game:
    """A game a client created: its seats' tokens (humans only) and what became of it."""

    game_id: str
    seats: int
    tokens: dict[int, str]
    finished: bool = False


@dataclass(frozen=True)
class Move:
    """A move a client sent at version `before`, and its final answer (None: none came)."""

    game: Game
    seat: int
    body: dict[str, Any]
    before: int
    key: str
    tries: list[str]
    answer: Answer | None

    def acked(self) -> bool:
        """Whether the move was answered 200."""
        return self.answer is not None and self.answer.status == 200


@dataclass
class Record:
    """Everything the clients saw, under one lock."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    games: list[Game] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    statuses: Counter[str] = field(default_factory=Counter)
    bad: list[str] = field(default_factory=list)
    crashed: list[str] = field(default_factory=list)

    def note(self, what: str, answer: Answer | None) -> None:
        """Count an answer (None: no answer came) and keep it if no client may ever get it."""
        with self.lock:
            self.statuses[f"{what} {'dropped' if answer is None else answer.label()}"] += 1
            fault = None if answer is None else forbidden(answer)
            if fault is not None:
                self.bad.append(f"{what}: {fault}")


def forbidden(answer: Answer) -> str | None:
    """What is wrong with an answer no fault may cause (a 5xx but 503; a 503 that is not
    problem+json with Retry-After), or None."""
    if answer.status == 503 and (answer.kind != "application/problem+json"
                                 or "retry-after" not in answer.headers):
        return f"503 as {answer.kind!r}, Retry-After {answer.headers.get('retry-after')!r}"
    if answer.status >= 500 and answer.status != 503:
        return f"{answer.status} {answer.kind} {answer.body}"
    return None


class Client:
    """One client's keep-alive connection to the API; it notes every answer in the record."""

    def __init__(self, port: int, record: Record, rng: random.Random) -> None:
        self.port, self.record, self.rng = port, record, rng
        self.conn: http.client.HTTPConnection | None = None

    def send(self, method: str, path: str, body: Any = None,
             headers: dict[str, str] | None = None) -> Answer | None:
        """Send one request; None if no answer came (connection error or timeout)."""
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                                       timeout=HTTP_TIMEOUT_S)
            self.conn.request(method, path, None if body is None else json.dumps(body),
                              headers or {})
            reply = self.conn.getresponse()
            data = reply.read()
        except (OSError, http.client.HTTPException):
            self.close()
            return None
        kind = reply.getheader("Content-Type", "").split(";")[0]
        return Answer(reply.status, kind, json.loads(data) if data else None,
                      {name.lower(): value for name, value in reply.getheaders()})

    def call(self, what: str, method: str, path: str, deadline: float, body: Any = None,
             headers: dict[str, str] | None = None) -> tuple[Answer | None, list[str]]:
        """Send the request, and the very same again after a short pause while no answer, a
        503 or a 409 for its Idempotency-Key still being handled (by a process killed
        meanwhile, until it is seen dead) comes, until another answer or the deadline;
        return it (None: none) and what each try got."""
        tries = []
        while time.monotonic() < deadline:
            answer = self.send(method, path, body, headers)
            self.record.note(what, answer)
            tries.append("dropped" if answer is None else answer.label())
            if answer is not None and answer.status != 503 and tries[-1] != KEY_PENDING:
                return answer, tries
            time.sleep(self.rng.uniform(*RETRY_PAUSE_S))
        return None, tries

    def close(self) -> None:
        """Drop the connection."""
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def auth(token: str | None) -> dict[str, str]:
    """Return the Authorization header of a seat token (none for a spectator)."""
    return {} if token is None else {"Authorization": f"Bearer {token}"}


# ---------------------------------------------------------------- the players

def create_game(client: Client, rng: random.Random, deadline: float) -> Game | None:
    """Create a one-hand game of 2-4 seats, each an AI (random or greedy) or not by chance."""
    seats = rng.randint(2, 4)
    players = [{"name": f"P{s}", "kind": "ai", "level": rng.choice(("random", "greedy"))}
               if rng.random() < 0.35 else {"name": f"P{s}", "kind": "human"}
               for s in range(seats)]
    body = {"players": players, "rules": {"hands": 1}, "seed": rng.randrange(2**31)}
    answer, _ = client.call("POST /games", "POST", "/v1/games", deadline, body, JSON_HEADERS)
    if answer is None or answer.status != 201:
        return None
    tokens = {s["seat"]: s["token"] for s in answer.body["seats"] if "token" in s}
    return Game(answer.body["game_id"], seats, tokens)


def play_game(client: Client, rng: random.Random, game: Game, record: Record,
              deadline: float) -> None:
    """Play the game's human seats (random legal moves) until it ends or the deadline."""
    path = f"/v1/games/{game.game_id}"
    seat = min(game.tokens, default=-1)  # -1: no human seat, read as a spectator
    while time.monotonic() < deadline:
        view, _ = client.call("GET /games/{id}", "GET", path, deadline,
                              headers=auth(game.tokens.get(seat)))
        if view is None or view.status != 200:
            time.sleep(POLL_S)
            continue
        state = view.body
        if state["status"] == "finished":
            game.finished = True
            return
        if state["turn"] not in game.tokens:  # an AI seat is to move
            time.sleep(POLL_S)
        elif state["turn"] != seat:
            seat = state["turn"]
        else:
            send_move(client, game, seat, rng.choice(state["legal_moves"]), state["version"],
                      record, deadline)


def send_move(client: Client, game: Game, seat: int, body: dict[str, Any], version: int,
              record: Record, deadline: float) -> None:
    """Send a move with If-Match and an Idempotency-Key (again on no answer or 503); keep it."""
    key = f"{game.game_id}-{version}-{client.rng.getrandbits(32):08x}"  # a new one a move
    headers = {**JSON_HEADERS, **auth(game.tokens[seat]), "If-Match": f'"{version}"',
               "Idempotency-Key": key}
    answer, tries = client.call("POST /moves", "POST", f"/v1/games/{game.game_id}/moves",
                                deadline, body, headers)
    with record.lock:
        record.moves.append(Move(game, seat, body, version, key, tries, answer))


def player(port: int, index: int, record: Record, chaos_ends: float, deadline: float) -> None:
    """One client: create and play games one after another while the chaos lasts, then play
    the last to its end (or the deadline)."""
    rng = random.Random(f"{SEED}-{index}")
    client = Client(port, record, rng)
    try:
        while time.monotonic() < chaos_ends:
            game = create_game(client, rng, deadline)
            if game is None:
                time.sleep(POLL_S)
                continue
            with record.lock:
                record.games.append(game)
            play_game(client, rng, game, record, deadline)
    except Exception as error:  # the thread hands it to the test, which fails on it
        with record.lock:
            record.crashed.append(repr(error))
    finally:
        client.close()


# ---------------------------------------------------------------- the chaos

@dataclass
class Serve:
    """`spinner serve` with 2 API workers, its output in a log; every process seen below it."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path
    seen: set[tuple[int, int]] = field(default_factory=set)

    def tree(self) -> dict[tuple[int, int], tuple[int, str]]:
        """Return the processes below serve now, and remember them (to end them at last)."""
        tree = process_tree(self.process.pid)
        self.seen.update(tree)
        return tree

    def victims(self, kind: str) -> list[int]:
        """Return the pids a kill of this kind may hit now."""
        tree, serve = self.tree(), self.process.pid
        if kind == "gunicorn worker":
            masters = [pid for (pid, _), (ppid, cmd) in tree.items()
                       if ppid == serve and "-m gunicorn" in cmd]
            return sorted(pid for (pid, _), (ppid, _) in tree.items() if ppid in masters)
        part = "redis-server" if kind == "redis-server" else "service.entrypoints.cli worker"
        return sorted(pid for (pid, _), (ppid, cmd) in tree.items()
                      if ppid == serve and part in cmd)


def wait_healthy(serve: Serve, client: Client, timeout_s: float) -> bool:
    """Wait until /healthz answers 200; False if it does not in time."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and serve.process.poll() is None:
        answer = client.send("GET", "/healthz")
        if answer is not None and answer.status == 200:
            return True
        time.sleep(0.1)
    return False


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    """Start `spinner serve` on its own redis-server; at last stop it (Ctrl-C) and end every
    process ever seen below it that still runs (a killed rq worker's scheduler included)."""
    port, log = free_port(), tmp_path / "serve.log"
    command = [sys.executable, "-m", "service.entrypoints.cli", "serve", "--port", str(port),
               "--data-dir", str(tmp_path / "var"), "--api-workers", "2"]
    with log.open("ab") as out:
        process = subprocess.Popen(command, env={**own_redis_env(), **SETTINGS},
                                   stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    running = Serve(process, port, log)
    try:
        yield running
    finally:
        running.tree()
        process.send_signal(signal.SIGINT)
        try:
            process.wait(STOP_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for pid, _ in filter(alive, running.seen):
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                os.kill(pid, signal.SIGKILL)


def watch(serve: Serve, until: float) -> None:
    """Wait until `until`, noting serve's processes every so often (a process that a killed
    one leaves behind, such as rq's scheduler, is thus known and ended at last)."""
    while (left := until - time.monotonic()) > 0:
        serve.tree()
        time.sleep(min(left, 0.25))


def run_chaos(serve: Serve, rng: random.Random, ends: float) -> list[str]:
    """SIGKILL one of serve's processes of a kind picked at random every 2-3.5 s until `ends`;
    return the log of the kills, each `+<seconds> <kind> <pid>` (`none` if there was none)."""
    kills: list[str] = []
    start = time.monotonic()
    while True:
        watch(serve, time.monotonic() + rng.uniform(*KILL_EVERY_S))
        if time.monotonic() >= ends:
            return kills
        kind = rng.choice(VICTIMS)
        victims = serve.victims(kind)
        pid = rng.choice(victims) if victims else None
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):  # it ended by itself meanwhile
                os.kill(pid, signal.SIGKILL)
        kills.append(f"+{time.monotonic() - start:.1f}s {kind} {pid or 'none'}")


# ---------------------------------------------------------------- the checks

Findings = dict[str, list[str]]


def fetch_log(client: Client, game: Game, deadline: float) -> tuple[bool, list[dict[str, Any]]]:
    """Return whether the match ended and its log: the export if it did, else the events a
    spectator sees."""
    path = f"/v1/games/{game.game_id}"
    answer, _ = client.call("GET /export", "GET", f"{path}/export", deadline)
    if answer is not None and answer.status == 200:
        return True, answer.body["events"]
    answer, _ = client.call("GET /events", "GET", f"{path}/events", deadline)
    return False, answer.body["events"] if answer is not None and answer.status == 200 else []


def is_choice(event: dict[str, Any]) -> bool:
    """Whether the event is a seat's move (a play, a draw of R16, a pass, a timeout, a leave),
    not what follows from one (obligations lifted, a hand or the match ended, R9's search)."""
    return event["type"] in CHOICES or (event["type"] == "tile_drawn"
                                        and event["data"].get("reason") == "draw")


def is_logged(move: Move, event: dict[str, Any]) -> bool:
    """Whether `event` is the one `move` makes."""
    data, body = event["data"], move.body
    if (event["seat"], event["type"]) != (move.seat, ACTION_EVENT[body["action"]]):
        return False
    if body["action"] == "play":
        return bool((data["tile"], data["end"], data["expose"])
                    == (body["tile"], body.get("end"), body.get("expose")))
    return bool(body["action"] == "pass" or data.get("reason") == "draw")


def check_ack(log: list[dict[str, Any]], move: Move) -> list[str]:
    """An acknowledged move is the event after the version it was sent at, and its answer's
    version is that of the last event it made."""
    assert move.answer is not None
    after = move.answer.body["version"]
    where = f"{move.game.game_id} v{move.before}->v{after} key {move.key}"
    if len(log) <= move.before or not is_logged(move, log[move.before]):
        found = log[move.before] if len(log) > move.before else f"{len(log)} events"
        return [f"{where}: {move.body} acknowledged, the log has {found}"]
    made = log[move.before + 1:after]
    if not move.before < after <= len(log) or any(map(is_choice, made)) or (
            after < len(log) and not is_choice(log[after])):
        return [f"{where}: its events end elsewhere: {[e['type'] for e in log[move.before:]]}"]
    return []


def check_game(game: Game, log: list[dict[str, Any]], moves: list[Move]) -> list[str]:
    """Every acknowledged move of the game is in its log once, as its answer said, and every
    move of a human seat in the log was acknowledged."""
    findings, acked = [], {}
    for move in moves:
        if not move.acked():
            continue
        if move.before in acked:
            findings.append(f"{game.game_id} v{move.before}: acknowledged twice, {move.key}")
        acked[move.before] = move
        findings += check_ack(log, move)
    for event in log:
        if event["seat"] in game.tokens and is_choice(event) and event["seq"] - 1 not in acked:
            sent = [(m.key, m.tries) for m in moves if m.before == event["seq"] - 1]
            findings.append(f"{game.game_id} seq {event['seq']} {event['type']} of seat "
                            f"{event['seat']}: in the log, never acknowledged; sent: {sent}")
    return findings


def check_logs(record: Record, logs: dict[str, tuple[bool, list[dict[str, Any]]]]) -> Findings:
    """Every game ended, its export verifies, and its log holds exactly the moves acked."""
    findings: Findings = {"games that did not end": [], "exports that fail verify": [],
                          "moves not logged as answered": []}
    for game in record.games:
        ended, log = logs[game.game_id]
        if not ended:
            ai = sorted(set(range(game.seats)) - set(game.tokens))
            last = log[-1]["type"] if log else None
            findings["games that did not end"].append(
                f"{game.game_id} ({game.seats} seats, AI {ai}): {len(log)} events, last {last}")
        elif (finding := audit(log)) is not None:
            findings["exports that fail verify"].append(f"{game.game_id}: {finding}")
        moves = [move for move in record.moves if move.game is game]
        findings["moves not logged as answered"] += check_game(game, log, moves)
    return findings


def check_answers(record: Record) -> Findings:
    """No answer but 200 to a move, no 5xx but 503 to anything, and no thread crashed."""
    refused = [f"{m.game.game_id} v{m.before} seat {m.seat} key {m.key}, tries {m.tries}: "
               f"{m.answer.body}"
               for m in record.moves if m.answer is not None and m.answer.status != 200]
    unanswered = [f"{m.game.game_id} v{m.before} key {m.key}, tries {m.tries}"
                  for m in record.moves if m.answer is None]
    return {"answers no fault may cause": record.bad, "moves refused": refused,
            "moves unanswered by the deadline": unanswered, "client threads": record.crashed}


def errors_in(log: str) -> Counter[str]:
    """Count the exceptions whose tracebacks a log holds, by the line naming each."""
    found: Counter[str] = Counter()
    inside = False
    for line in log.splitlines():
        if line.startswith("Traceback"):
            inside = True
        elif inside and line and not line.startswith((" ", "{", "During", "The above")):
            found[line[:160]] += 1
            inside = False
    return found


def summary(record: Record, kills: list[str], findings: Findings, log: str,
            settled_s: float) -> str:
    """Return what happened, for whoever reads a failure: kills, games, answers, findings;
    `settled_s`: how long after the chaos the clients were done."""
    kinds = Counter(kill.split(" ", 1)[1].rsplit(" ", 1)[0] for kill in kills
                    if not kill.endswith(" none"))
    restarts = Counter(line.split(" exited")[0].removeprefix("spinner: the ")
                       for line in log.splitlines() if " exited (" in line)
    lines = [f"chaos seed {SEED}: {len(kills)} kills in {CHAOS_S:.0f} s: {dict(kinds)} "
             f"({sum(k.endswith(' none') for k in kills)} found nothing to kill); serve "
             f"restarted {dict(restarts)}; errors in its log: {dict(errors_in(log))}",
             f"games: {len(record.games)}, ended: {sum(g.finished for g in record.games)}, "
             f"the clients done {settled_s:.1f} s after the chaos; "
             f"moves acknowledged: {sum(m.acked() for m in record.moves)} "
             f"of {len(record.moves)} sent",
             "answers: " + ", ".join(f"{k}: {n}" for k, n in sorted(record.statuses.items())),
             "kills: " + ", ".join(kills)]
    for what, found in findings.items():
        lines += [f"{what}: {len(found)}"] + [f"  {finding}" for finding in found[:10]]
    return "\n".join(lines)


def test_under_sigkills_no_acked_move_is_lost_every_game_ends_and_no_5xx_but_503(
        serve: Serve) -> None:
    record, rng = Record(), random.Random(SEED)
    probe = Client(serve.port, record, rng)
    assert wait_healthy(serve, probe, START_S), serve.log.read_text()
    chaos_ends = time.monotonic() + CHAOS_S
    deadline = chaos_ends + FINISH_S
    threads = [threading.Thread(target=player, args=(serve.port, i, record, chaos_ends,
                                                     deadline)) for i in range(CLIENTS)]
    for thread in threads:
        thread.start()
    kills = run_chaos(serve, rng, chaos_ends)
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()) + HTTP_TIMEOUT_S)
    settled_s = time.monotonic() - chaos_ends
    record.crashed += [f"{t.name} still runs" for t in threads if t.is_alive()]
    healthy = wait_healthy(serve, probe, START_S)
    fetch_by = time.monotonic() + START_S
    logs = {game.game_id: fetch_log(probe, game, fetch_by) for game in record.games}
    probe.close()
    findings = {**check_answers(record), **check_logs(record, logs), "serve": [] if healthy
                else [f"not healthy after the chaos; exit status {serve.process.poll()}"]}
    print(summary(record, kills, findings, serve.log.read_text(), settled_s))
    failed = {what: len(found) for what, found in findings.items() if found}
    assert not failed, f"{failed}; serve's log: {serve.log}"
