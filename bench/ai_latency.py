"""Time from a human move's answer to the AI's reply in the log, through the real API,
queue and workers (greedy AI seats; Redis with AOF and fsync on every write).

    python -m bench.ai_latency           # one JSON object
    python -m bench.ai_latency --flood   # human vs greedy, calm and then while one address
                                         # floods the API with expert games (issue 17)

The workers are those of `spinner serve`: one of both lanes and one of the fast lane alone.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient

from bench import ROOT
from bench.api import auth
from service.adapters.bootstrap import Services, build
from service.adapters.settings import Settings
from service.api.app import create_app
from service.entrypoints import processes
from service.entrypoints.redis_server import RedisServer
from service.usecases.clients import Client


def _reply_times(client, store, seats: int, moves: int, rng: random.Random) -> list[float]:
    """Play one human seat against greedy AIs; return ms from each answer to the AI reply."""
    players = [{"name": "human", "kind": "human"}] + [
        {"name": f"ai{s}", "kind": "ai", "level": "greedy"} for s in range(1, seats)]
    created = client.post("/v1/games", json={"players": players, "rules": {"hands": 10}})
    game_id, token = created.json["game_id"], created.json["seats"][0]["token"]
    times: list[float] = []
    while len(times) < moves:
        state = client.get(f"/v1/games/{game_id}", headers=auth(token)).json
        if state["status"] != "playing":
            break
        if state["turn"] != 0:
            store.wait_for_events(game_id, state["version"], 2000)
            continue
        answer = client.post(f"/v1/games/{game_id}/moves", json=rng.choice(state["legal_moves"]),
                             headers=auth(token))
        answered = time.perf_counter()
        if answer.json["turn"] in (0, None):
            continue  # no AI to answer this move
        if store.wait_for_events(game_id, answer.json["version"], 5000):
            times.append((time.perf_counter() - answered) * 1000)
    return times


def quiet_logs() -> None:
    """Keep the app's access log out of the figures."""
    logging.basicConfig(level=logging.WARNING)


FLOOD_BODY = {"players": [{"name": f"E{s}", "kind": "ai", "level": "expert"} for s in range(8)],
              "rules": {"hands": 10}}
"""The issue's flood: 8 expert seats and 10 hands (568 AI turns a game), 30 creations."""


@contextlib.contextmanager
def serving() -> Iterator[tuple[Flask, Services]]:
    """Run Redis and the workers of `spinner serve`; yield the app and its services."""
    with tempfile.TemporaryDirectory() as tmp, RedisServer(Path(tmp) / "redis") as redis:
        env = {**os.environ, "REDIS_URL": redis.url, "PYTHONPATH": str(ROOT)}
        workers = [subprocess.Popen([sys.executable, "-m", "service.entrypoints.cli", "worker",
                                     *flags], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL) for flags in ([], ["--fast-only"])]
        try:
            settings = Settings(redis_url=redis.url, rate_limit_per_token=0,
                                rate_limit_per_address=0)
            services = build(settings)
            yield create_app({"TESTING": True}, services=services), services
        finally:
            for worker in workers:
                processes.stop(worker, 15)


def client_at(app: Flask, address: str) -> FlaskClient:
    """Return a test client whose requests come from `address`."""
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = address
    return client


def measure_flood(moves: int = 60) -> dict[str, float]:
    """Return a 2-seat human vs greedy game's reply p50 in ms, calm and while another address
    floods the API with the issue's expert games, and how many of those were refused."""
    with serving() as (app, services):
        player, rng = client_at(app, "192.0.2.1"), random.Random(7)
        calm = _reply_times(player, services.store, 2, moves, rng)
        flooder = client_at(app, "192.0.2.66")
        answers = [flooder.post("/v1/games", json=FLOOD_BODY).status_code for _ in range(30)]
        flooded = _reply_times(player, services.store, 2, moves, rng)
        expert_moves = sum(services.store.version(g) for g in _flood_games(services))
    return {"calm_reply_p50_ms": round(statistics.median(calm), 2),
            "flood_reply_p50_ms": round(statistics.median(flooded), 2),
            "flood_reply_p99_ms": round(statistics.quantiles(flooded, n=100)[98], 2),
            "flood_created": answers.count(201), "flood_refused": answers.count(429),
            "flood_events_meanwhile": expert_moves, "ai_replies": len(calm) + len(flooded)}


def _flood_games(services: Services) -> list[str]:
    """Return the flood's games, counted open against its address."""
    return services.games.ctx.caps.ledger.open_games(Client("addr:192.0.2.66"))


def measure(seats_list: tuple[int, ...] = (2, 4), moves: int = 60) -> dict[str, float]:
    """Return p50 and p99 reply times in ms over `moves` human moves per table size."""
    with serving() as (app, services):
        client, rng = app.test_client(), random.Random(7)
        by_seats = {seats: _reply_times(client, services.store, seats, moves, rng)
                    for seats in seats_list}
    times = [t for table in by_seats.values() for t in table]
    figures = {f"ai_reply_p50_ms_{seats}p": round(statistics.median(table), 2)
               for seats, table in by_seats.items()}
    return {"ai_reply_p50_ms": round(statistics.median(times), 2),
            "ai_reply_p99_ms": round(statistics.quantiles(times, n=100)[98], 2),
            **figures, "ai_replies": len(times)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flood", action="store_true", help="calm, then under the flood")
    quiet_logs()
    print(json.dumps(measure_flood() if parser.parse_args().flood else measure()))
