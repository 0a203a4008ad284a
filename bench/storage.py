"""How many bytes does a game keep in Redis: finished (before and after compaction) and bare?

    python -m bench.storage              # 5 ten-hand games; the last line is one JSON object
    python -m bench.storage --games 10 --seed 3

It starts a redis-server of its own (no AOF: only memory is measured) in a temporary
directory and plays two-human, ten-hand games to their end through the use cases over the
Redis store with compaction off (seeded random legal moves, the real clock), so each game's
keys are what they were before compaction: its stream, snapshot and meta. It sums `MEMORY
USAGE` (every element counted) of the game's keys, compacts the game as the move that ends
it does, and sums them again; the baseline is the uncompacted game. It also times the read
of a finished game's export from a store with nothing kept (stream vs compact log), and
measures a bare creation (a game made and never moved in). Only 127.0.0.1 is contacted.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from contextlib import closing
from pathlib import Path

import redis

from service.adapters.redis_store import RedisEventStore
from service.entrypoints.redis_server import RedisServer
from tests.support.storage import create, footprint, games_over, play_to_end

READ_ROUNDS = 20


def export_ms(client: redis.Redis, game_id: str) -> float:
    """Return the best time, in ms, of reading the game's whole log by a fresh store."""
    with closing(RedisEventStore(client)) as store:
        best = float("inf")
        for _ in range(READ_ROUNDS):
            start = time.perf_counter()
            store.read(game_id)
            best = min(best, time.perf_counter() - start)
    return best * 1000


def measure(client: redis.Redis, games: int, seed: int) -> dict[str, float]:
    """Play `games` finished games and a bare creation; return the figures."""
    before, after, events, read_stream, read_compact = [], [], [], [], []
    with closing(RedisEventStore(client, compact=False)) as store:
        use_cases = games_over(store)
        for n in range(games):
            game_id = create(use_cases, seed + n)
            events.append(play_to_end(use_cases, game_id, random.Random(seed + n)))
            before.append(footprint(client, game_id))
            read_stream.append(export_ms(client, game_id))
            store.compact(game_id)
            after.append(footprint(client, game_id))
            read_compact.append(export_ms(client, game_id))
        bare = footprint(client, create(use_cases, seed))
    return {"games": games, "events_per_game": statistics.mean(events),
            "bytes_before": statistics.mean(before), "bytes_after": statistics.mean(after),
            "shrink": statistics.mean(b / a for b, a in zip(before, after, strict=True)),
            "bytes_bare_creation": bare,
            "read_ms_stream": statistics.median(read_stream),
            "read_ms_compact": statistics.median(read_compact)}


def main() -> None:
    """Run the benchmark and print a table, then one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with (tempfile.TemporaryDirectory() as data,
          RedisServer(Path(data), appendonly=False) as server,
          redis.Redis.from_url(server.url) as client):
        figures = measure(client, args.games, args.seed)
    print(f"{args.games} finished games x 10 hands, 2 human seats, "
          f"{figures['events_per_game']:.0f} events a game on average")
    print(f"bytes per finished game: {figures['bytes_before']:,.0f} before compaction, "
          f"{figures['bytes_after']:,.0f} after (shrink x{figures['shrink']:.1f})")
    print(f"bytes per bare creation: {figures['bytes_bare_creation']:,.0f}")
    print(f"read of a whole finished log: {figures['read_ms_stream']:.2f} ms from the stream, "
          f"{figures['read_ms_compact']:.2f} ms from the compact log")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
