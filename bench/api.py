"""Does a move cost the same in hand 10 as in hand 1? Whole games through the real app and Redis.

    python -m bench.api              # 4 ten-hand games; the last line is one JSON object
    python -m bench.api --games 8 --lanes 4 --seed 3

It starts a redis-server of its own (AOF, appendfsync always, as `spinner serve` runs it) in a
temporary directory, builds the app as production does (`create_app(services=build(...))`)
and plays two-player, all-human, ten-hand games through Flask's test client: per move a GET
of the seat's view (for its legal moves, not timed) and a timed POST of a random one of them
(seeded). The POSTs are grouped by the hand they were made in. Rate limits are off: this
client plays as fast as it can, far beyond the per-token and per-address defaults. The app's
JSON logs go to a file in the temporary directory.

Each request rebuilds the state from the latest snapshot (taken at each hand start) plus that
hand's events, so the cost of a move should not grow with the game: `ratio_hand_10_vs_1` is
hand 10's median over hand 1's. Other work on the machine comes and goes, so the games are
played in `--lanes` at once, one move each in turn, and lane i's first game is first brought
(untimed) to hand 1 + 10 i / lanes: at any moment the games in play are spread over the
hands, and a change of load hits every hand alike rather than the later ones.

`replay_events_per_s` times the pure fold, `replay()`, over the finished games' exported logs
(best of several rounds). Only 127.0.0.1 is ever contacted.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import random
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from service.adapters import logs
from service.adapters.bootstrap import build
from service.adapters.settings import Settings
from service.api.app import create_app
from service.entrypoints.redis_server import RedisServer
from service.game.state import replay

HANDS = 10
MAX_MOVES_PER_GAME = 5000  # a ten-hand two-player game takes a few hundred
REPLAY_ROUNDS = 10


def auth(token: str) -> dict[str, str]:
    """Return the Authorization header for a seat token."""
    return {"Authorization": f"Bearer {token}"}


class Game:
    """A two-human, ten-hand game played through the test client with seeded random moves."""

    def __init__(self, client: Any, seed: int) -> None:
        self.client, self.rng, self.moves = client, random.Random(seed), 0
        players = [{"name": "P0", "kind": "human"}, {"name": "P1", "kind": "human"}]
        created = client.post("/v1/games", json={"players": players, "seed": seed,
                                                 "rules": {"hands": HANDS, "opening": "draw"}})
        assert created.status_code == 201, created.json
        self.url = f"/v1/games/{created.json['game_id']}"
        self.tokens = {s["seat"]: s["token"] for s in created.json["seats"]}

    def hand_number(self) -> int:
        """The hand in play."""
        number: int = self.client.get(self.url).json["hand_number"]
        return number

    def step(self) -> tuple[int, float] | None:
        """Play one move; return its hand number and the POST's milliseconds (None: ended)."""
        state = self.client.get(self.url).json
        if state["status"] != "playing":
            return None
        self.moves += 1
        if self.moves > MAX_MOVES_PER_GAME:
            raise RuntimeError(f"{self.url} did not end within {MAX_MOVES_PER_GAME} moves")
        headers = auth(self.tokens[state["turn"]])
        mine = self.client.get(self.url, headers=headers).json
        move = self.rng.choice(mine["legal_moves"])
        start = time.perf_counter()
        answer = self.client.post(f"{self.url}/moves", json=move, headers=headers)
        elapsed_ms = (time.perf_counter() - start) * 1000
        assert answer.status_code == 200, answer.json
        return mine["hand_number"], elapsed_ms

    def export(self) -> list[dict[str, Any]]:
        """The ended game's complete log."""
        answer = self.client.get(f"{self.url}/export")
        assert answer.status_code == 200, answer.json
        events: list[dict[str, Any]] = answer.json["events"]
        return events


def play(client: Any, games: int, lanes: int, seed: int,
         timings: dict[int, list[float]]) -> list[list[dict[str, Any]]]:
    """Play `games` games, `lanes` at a time and staggered; add each timed POST to `timings`
    by hand number; return the exported logs."""
    seeds = iter(range(seed, seed + games))
    playing = [Game(client, s) for s in itertools.islice(seeds, lanes)]
    for lane, game in enumerate(playing):
        while game.hand_number() < 1 + lane * HANDS // len(playing):
            game.step()  # untimed: only the stagger
    logs = []
    while playing:
        for game in list(playing):
            step = game.step()
            if step is not None:
                timings[step[0]].append(step[1])
                continue
            logs.append(game.export())
            playing.remove(game)
            playing.extend(Game(client, s) for s in itertools.islice(seeds, 1))
    return logs


def percentile(values: list[float], q: int) -> float:
    """Return the q-th percentile (1..99) of `values`."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def replay_rate(logs: list[list[dict[str, Any]]]) -> float:
    """Return events folded per second by `replay()` over `logs`, best of a few rounds."""
    count = sum(len(log) for log in logs)
    best = float("inf")
    for _ in range(REPLAY_ROUNDS):
        start = time.perf_counter()
        for log in logs:
            replay(log)
        best = min(best, time.perf_counter() - start)
    return count / best


def main() -> None:
    """Run the benchmark and print a table, then one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4, help="ten-hand games to play")
    parser.add_argument("--lanes", type=int, default=2, help="games in play at once")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    timings: dict[int, list[float]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="spinner-bench-") as tmp, \
            RedisServer(Path(tmp) / "redis") as server:
        app_log = logging.FileHandler(Path(tmp) / "app.log")
        app_log.setFormatter(logs.JsonFormatter())
        logging.basicConfig(level=logging.INFO, handlers=[app_log])
        settings = Settings(redis_url=server.url, rate_limit_per_token=0,
                            rate_limit_per_address=0)
        client = create_app(services=build(settings)).test_client()
        exported = play(client, args.games, args.lanes, args.seed, timings)

    print(f"{args.games} games x {HANDS} hands, 2 human seats, {args.lanes} in play at once; "
          f"POST /moves through the app, Redis with AOF (appendfsync always)")
    print(f"{'hand':>4} {'moves':>6} {'p50 ms':>8} {'p90 ms':>8}")
    for hand in range(1, HANDS + 1):
        values = timings[hand]
        print(f"{hand:>4} {len(values):>6} {percentile(values, 50):>8.3f} "
              f"{percentile(values, 90):>8.3f}")
    p50_first = statistics.median(timings[1])
    p50_last = statistics.median(timings[HANDS])
    print(json.dumps({
        "move_p50_ms_hand_1": round(p50_first, 3),
        "move_p50_ms_hand_10": round(p50_last, 3),
        "ratio_hand_10_vs_1": round(p50_last / p50_first, 3),
        "replay_events_per_s": round(replay_rate(exported)),
    }))


if __name__ == "__main__":
    main()
