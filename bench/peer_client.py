"""The peer bench's one-request client: one POST a move, no GET (issue 21).

    python bench/peer_client.py PORT FIRST_SLOT SLOTS GAMES_PER_SLOT

The interface of the peer bench's client_a.py (../shared/peer-bench), which runs it with
`A_CLIENT=bench/peer_client.py` in its own venv (aiohttp, orjson): so it imports nothing of
the project's. Setup (untimed): creates SLOTS * GAMES_PER_SLOT games of two human seats, one
hand each, and opens one keep-alive session per seat of each slot. Prints "READY", then
waits for "GO" on stdin.

Timed phase: each slot plays its games one after another. Each seat follows its game's
stream with `?state=true`: after every append the server pushes the seat its own state (a
`state` frame, as `GET /v1/games/{id}` answers it), so the seat never GETs. On a state
whose turn is its own, it POSTs one of `legal_moves` at random with If-Match naming that
version; the POST's answer (the new state as the mover sees it) tells whether it moves again
(after a draw). Frames of versions it already knows are skipped. It takes no gzip
(`Accept-Encoding: identity`): over loopback compressing the answers only costs CPU.

A move's latency is its POST: request sent -> 200 read. Prints one line "FINISHED <json>";
`moves_by_state` counts the moves chosen on a pushed state frame. Only 127.0.0.1 is
contacted; every loop is bounded.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson

HOST = "127.0.0.1"
MAX_ERRORS_PER_GAME = 20
REQUEST_TIMEOUT_S = 30.0
STREAM_READ_TIMEOUT_S = 60.0  # the server sends a keep-alive every 15 s
ROUND_TIMEOUT_S = float(os.environ.get("ROUND_TIMEOUT_S", "900"))
CREATE_BODY = orjson.dumps({"players": [{"name": "p0", "kind": "human"},
                                        {"name": "p1", "kind": "human"}],
                            "rules": {"hands": 1}})
STATE_EVENT = b"event: state"


class Tally:
    """What one client process counts, as client_a.py reports it."""

    def __init__(self) -> None:
        self.moves = 0
        self.moves_by_state = 0
        self.errors = 0
        self.retries = 0
        self.error_samples: list[str] = []
        self.move_ms: list[float] = []
        self.get_ms: list[float] = []
        self.ack_t: list[float] = []
        self.games_done = 0
        self.games_aborted = 0
        self.slot_done_t: list[float] = []

    def error(self, what: str) -> None:
        """Count an error, keeping the first few."""
        self.errors += 1
        if len(self.error_samples) < 10:
            self.error_samples.append(what[:300])


class Seat:
    """One seat's device: one session, a connection for its stream and one for its moves."""

    def __init__(self, port: int) -> None:
        self.base = f"http://{HOST}:{port}"
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=2))

    async def request(self, tally: Tally, method: str, path: str, token: str | None = None,
                      body: bytes | None = None, version: int | None = None
                      ) -> tuple[int, Any, float]:
        """Send one request; return (status, decoded JSON or None, seconds). Status 0: no
        answer. A connection the server had closed while idle is retried once at once."""
        headers = {"Accept": "application/json", "Accept-Encoding": "identity"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if version is not None:
            headers["If-Match"] = f'"{version}"'
        if body is not None:
            headers["Content-Type"] = "application/json"
        timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S)
        for attempt in (0, 1):
            start = time.perf_counter()
            try:
                async with self.session.request(method, self.base + path, data=body,
                                                headers=headers, timeout=timeout) as answer:
                    data = await answer.read()
                    elapsed = time.perf_counter() - start
                    return answer.status, _decoded(data), elapsed
            except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as error:
                if attempt == 0:
                    tally.retries += 1
                    continue
                return 0, repr(error), time.perf_counter() - start
            except (TimeoutError, aiohttp.ClientError) as error:
                return 0, repr(error), time.perf_counter() - start
        raise AssertionError("unreachable")

    async def states(self, game: Game, seat: int) -> AsyncIterator[dict[str, Any]]:
        """Yield the seat's state from each `state` frame of its game's stream, until the
        stream ends."""
        url = f"{self.base}/v1/games/{game.game_id}/stream?state=true&after={game.version}"
        headers = {"Authorization": f"Bearer {game.tokens[seat]}",
                   "Accept": "text/event-stream"}
        timeout = aiohttp.ClientTimeout(total=None, sock_read=STREAM_READ_TIMEOUT_S)
        async with self.session.get(url, headers=headers, timeout=timeout) as answer:
            if answer.status != 200:
                raise RuntimeError(f"stream {answer.status}")
            wanted = False
            async for line in answer.content:
                if line.startswith(b"event: "):
                    wanted = line.rstrip() == STATE_EVENT
                elif wanted and line.startswith(b"data: "):
                    yield orjson.loads(line[6:])
                    wanted = False

    async def close(self) -> None:
        """Close the session and its connections."""
        await self.session.close()


def _decoded(data: bytes) -> Any:
    try:
        return orjson.loads(data) if data else None
    except orjson.JSONDecodeError:
        return None


class Game:
    """A created game: its id, its version then, and each seat's token."""

    def __init__(self, game_id: str, version: int, tokens: list[str]) -> None:
        self.game_id = game_id
        self.version = version
        self.tokens = tokens
        self.errors = 0
        self.finished = False
        self.aborted = False


class SeatPlay:
    """One seat playing one game: its stream's states in, its moves out."""

    def __init__(self, game: Game, seat: int, client: Seat, tally: Tally,
                 rng: random.Random) -> None:
        self.game, self.seat, self.client = game, seat, client
        self.tally, self.rng = tally, rng
        self.path = f"/v1/games/{game.game_id}"
        self.known = 0  # the newest version this seat has seen

    def fail(self, what: str) -> bool:
        """Count an error; True when the game is to be abandoned."""
        self.tally.error(what)
        self.game.errors += 1
        if self.game.errors > MAX_ERRORS_PER_GAME:
            self.game.aborted = True
        return self.game.aborted

    async def play(self) -> None:
        """Follow the stream to the game's end, moving on each state that is the seat's
        turn; a state no newer than one seen is skipped."""
        try:
            async for state in self.client.states(self.game, self.seat):
                if self.game.aborted:
                    return
                if state["version"] > self.known:
                    await self.take_turn(state)
        except (TimeoutError, aiohttp.ClientError, RuntimeError) as error:
            self.fail(f"stream {error!r}")
            self.game.aborted = True
        if not (self.game.finished or self.game.aborted):
            self.fail("the stream ended before the game did")
            self.game.aborted = True

    async def take_turn(self, state: dict[str, Any]) -> None:
        """Move while `state` says it is this seat's turn (a draw leaves it so): first on the
        pushed state, then on each POST's answer."""
        pushed = True
        for _ in range(1000):  # the moves of one turn (draws, then a play or a pass)
            self.known = max(self.known, state["version"])
            if state.get("status") == "finished":
                self.game.finished = True
                return
            if state.get("turn") != self.seat or not state.get("legal_moves"):
                return
            self.tally.moves_by_state += pushed
            pushed = False
            answer = await self.move(state)
            if answer is None:
                return
            state = answer

    async def move(self, state: dict[str, Any]) -> dict[str, Any] | None:
        """POST a random legal move at the state's version; return the new state (None after
        an error: the stream's next state carries on, or a GET recovers)."""
        move = self.rng.choice(state["legal_moves"])
        status, body, seconds = await self.client.request(
            self.tally, "POST", self.path + "/moves", self.game.tokens[self.seat],
            orjson.dumps(move), state["version"])
        if status == 200 and isinstance(body, dict):
            self.tally.moves += 1
            self.tally.move_ms.append(seconds * 1000)
            self.tally.ack_t.append(time.time())
            return body
        if self.fail(f"POST {status} {str(body)[:200]}"):
            return None
        status, body, seconds = await self.client.request(
            self.tally, "GET", self.path, self.game.tokens[self.seat])
        if status == 200 and isinstance(body, dict):
            self.tally.get_ms.append(seconds * 1000)
            return body
        self.fail(f"GET {status} {str(body)[:200]}")
        return None


async def play_game(game: Game, seats: list[Seat], tally: Tally, rng: random.Random) -> None:
    """Play one game: both seats follow their streams until it ends (or, once it is
    abandoned, until the first of them stops)."""
    plays = [asyncio.create_task(SeatPlay(game, s, seats[s], tally, rng).play())
             for s in (0, 1)]
    _, pending = await asyncio.wait(plays, return_when=asyncio.FIRST_COMPLETED)
    if game.aborted:
        for play in pending:
            play.cancel()
    await asyncio.gather(*plays, return_exceptions=True)
    if game.finished:
        tally.games_done += 1
    else:
        tally.games_aborted += 1


async def play_slot(games: list[Game], seats: list[Seat], tally: Tally,
                    rng: random.Random) -> None:
    """Play a slot's games one after another."""
    for game in games:
        await play_game(game, seats, tally, rng)
    tally.slot_done_t.append(time.time())


async def create_game(seat: Seat, tally: Tally) -> Game:
    """Create a game of two human seats, one hand."""
    status, body = 0, None
    for _ in range(10):
        status, body, _ = await seat.request(tally, "POST", "/v1/games", body=CREATE_BODY)
        if status == 201 and isinstance(body, dict):
            return Game(body["game_id"], int(body["version"]),
                        [s["token"] for s in body["seats"]])
        await asyncio.sleep(0.2)
    raise RuntimeError(f"could not create a game: {status} {body}")


async def main() -> int:
    """Set up, say READY, wait for GO, play, print FINISHED with the tally."""
    port, first_slot, slots, per_slot = (int(a) for a in sys.argv[1:5])
    rng = random.Random(int(os.environ.get("SEED", "0")) * 1000 + first_slot)
    tally = Tally()
    seats = [[Seat(port), Seat(port)] for _ in range(slots)]
    try:
        games: list[list[Game]] = [[] for _ in range(slots)]
        sem = asyncio.Semaphore(8)

        async def make(slot: int) -> None:
            async with sem:
                games[slot].append(await create_game(seats[slot][0], tally))

        await asyncio.gather(*(make(s) for s in range(slots) for _ in range(per_slot)))
        await asyncio.gather(*(seat.request(tally, "GET", "/healthz")
                               for pair in seats for seat in pair))
        tally.retries = 0
        print("READY", flush=True)
        line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        if line.strip() != "GO":
            return 2
        cpu0 = time.process_time()
        try:
            await asyncio.wait_for(
                asyncio.gather(*(play_slot(games[s], seats[s], tally, rng)
                                 for s in range(slots))),
                ROUND_TIMEOUT_S)
        except TimeoutError:
            tally.error("round timed out")
        result = {"moves": tally.moves, "moves_by_state": tally.moves_by_state,
                  "errors": tally.errors, "retries": tally.retries,
                  "error_samples": tally.error_samples, "lat_ms": tally.move_ms,
                  "get_ms": tally.get_ms, "ack_t": tally.ack_t,
                  "slot_done_t": tally.slot_done_t, "games_done": tally.games_done,
                  "games_aborted": tally.games_aborted,
                  "self_cpu_s": time.process_time() - cpu0,
                  "games_total": slots * per_slot}
        print("FINISHED " + orjson.dumps(result).decode(), flush=True)
        return 0
    finally:
        for pair in seats:
            for seat in pair:
                await seat.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
