"""Time from a human move's answer to the AI's reply in the log, through the real API,
queue and worker (greedy AI seats; Redis with AOF and fsync on every write).

    python -m bench.ai_latency       # one JSON object
"""

from __future__ import annotations

import json
import logging
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import ROOT
from bench.api import auth
from service.adapters.bootstrap import build
from service.adapters.settings import Settings
from service.api.app import create_app
from service.entrypoints import processes
from service.entrypoints.redis_server import RedisServer


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


def measure(seats_list: tuple[int, ...] = (2, 4), moves: int = 60) -> dict[str, float]:
    """Return p50 and p99 reply times in ms over `moves` human moves per table size."""
    with tempfile.TemporaryDirectory() as tmp, RedisServer(Path(tmp) / "redis") as redis:
        env = {**os.environ, "REDIS_URL": redis.url, "PYTHONPATH": str(ROOT)}
        worker = subprocess.Popen([sys.executable, "-m", "service.entrypoints.cli", "worker"],
                                  env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            settings = Settings(redis_url=redis.url, rate_limit_per_token=0,
                                rate_limit_per_address=0)
            services = build(settings)
            client = create_app({"TESTING": True}, services=services).test_client()
            rng = random.Random(7)
            by_seats = {seats: _reply_times(client, services.store, seats, moves, rng)
                        for seats in seats_list}
        finally:
            processes.stop(worker, 15)
    times = [t for table in by_seats.values() for t in table]
    figures = {f"ai_reply_p50_ms_{seats}p": round(statistics.median(table), 2)
               for seats, table in by_seats.items()}
    return {"ai_reply_p50_ms": round(statistics.median(times), 2),
            "ai_reply_p99_ms": round(statistics.quantiles(times, n=100)[98], 2),
            **figures, "ai_replies": len(times)}


if __name__ == "__main__":
    quiet_logs()
    print(json.dumps(measure()))
