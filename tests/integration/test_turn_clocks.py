"""Turn clocks and leaving with real rq workers and a real redis-server (API.md "Lifecycle"):
a game whose seat never moves ends; a move just before its deadline is never followed by a
timeout; a clock pending through kill -9 of the worker and of redis-server runs out once; a
seat that leaves mid-hand is played by its AI, and the export verifies.

The clocks here are of 1 or 2 seconds: the tests' settings lower TURN_SECONDS_MIN (10 by
default, as tests/api/test_lifecycle.py checks)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import redis

from service.adapters.bootstrap import Services, build
from service.adapters.settings import Settings
from service.adapters.turn_queue import pending_clocks
from service.api.app import create_app
from service.entrypoints.cli import main as spinner
from service.entrypoints.redis_server import RedisServer
from tests.api.driver import auth
from tests.integration.test_faults import children
from tests.workers import WorkerProcess, wait_until

HUMANS = [{"name": "Ann", "kind": "human"}, {"name": "Bea", "kind": "human"}]
BEFORE_DEADLINE_S = 0.25
"""How long before its deadline a seat's "last moment" move is sent."""


def settings_for(url: str) -> Settings:
    """Settings for a test: 1 s clocks allowed, a lost clock healed 1 s after it is due."""
    return Settings(redis_url=url, turn_seconds_min=1, ai_stuck_after_s=1.0, ai_budget_s=0.05,
                    seeded_games=True, rate_limit_per_token=0, rate_limit_per_address=0)


@pytest.fixture
def services(redis_url: str, redis_client: redis.Redis) -> Services:
    """The services over the flushed test Redis."""
    return build(settings_for(redis_url))


@pytest.fixture
def client(services: Services) -> Any:
    """A client of the app."""
    return create_app({"TESTING": True}, services=services).test_client()


@pytest.fixture
def worker(redis_url: str, redis_client: redis.Redis) -> Iterator[WorkerProcess]:
    """One `spinner worker` (with rq's scheduler) on the test Redis."""
    process = WorkerProcess(redis_url, ai_budget_s="0.05", ai_min_delay_s="0.01",
                            ai_sweep_every_s="1")
    yield process
    process.stop()


def create(client: Any, players: list[dict[str, str]], turn_seconds: int,
           seed: int) -> tuple[str, dict[int, str]]:
    """Create a one-hand game with a clock; return its path and the human seats' tokens."""
    answer = client.post("/v1/games", json={
        "players": players, "rules": {"hands": 1, "turn_seconds": turn_seconds}, "seed": seed})
    assert answer.status_code == 201, answer.json
    return answer.headers["Location"], {s["seat"]: s["token"] for s in answer.json["seats"]
                                        if "token" in s}


def log(client: Any, game: str) -> list[dict[str, Any]]:
    """The game's log as a spectator reads it (a read also heals a lost clock)."""
    return client.get(f"{game}/events").json["events"]


def timeouts(events: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """The (seq, seat) of every turn_timed_out."""
    return [(e["seq"], e["seat"]) for e in events if e["type"] == "turn_timed_out"]


def move(client: Any, game: str, token: str, state: dict[str, Any]) -> None:
    """Send the seat's first legal move, on the state's version."""
    answer = client.post(f"{game}/moves", json=state["legal_moves"][0], headers={
        **auth(token), "If-Match": f'"{state["version"]}"'})
    assert answer.status_code == 200, answer.json


def verified_export(client: Any, game: str, path: Path) -> list[dict[str, Any]]:
    """The ended game's export, which `spinner verify` accepts."""
    export = client.get(f"{game}/export")
    path.write_bytes(export.get_data())
    assert spinner(["verify", str(path)]) == 0
    return export.json["events"]


def test_a_seat_that_never_moves_is_timed_out_leaves_and_the_game_ends(
        client: Any, worker: WorkerProcess, tmp_path: Path) -> None:
    game, tokens = create(client, HUMANS, 1, seed=11)
    last_moments: dict[int, int] = {}  # seat 0's moves sent just before its deadline: the
    # version each was sent at, and its answer (412 only if the machine was too slow)
    ends = time.monotonic() + 40
    while (mine := client.get(game, headers=auth(tokens[0])).json)["status"] == "playing":
        assert time.monotonic() < ends, "the game did not end"
        if mine["turn"] != 0:
            time.sleep(0.05)
        elif len(last_moments) < 3:
            due = datetime.fromisoformat(mine["turn_deadline"]).timestamp()
            time.sleep(max(0.0, due - BEFORE_DEADLINE_S - time.time()))
            last_moments[mine["version"]] = client.post(
                f"{game}/moves", json=mine["legal_moves"][0],
                headers={**auth(tokens[0]), "If-Match": f'"{mine["version"]}"'}).status_code
        else:
            move(client, game, tokens[0], mine)
    events = verified_export(client, game, tmp_path / "game.json")  # no timeout came early
    landed = [v for v, status in last_moments.items() if status == 200]
    assert landed and set(last_moments.values()) <= {200, 412}
    timed = timeouts(events)
    assert all(seat == 1 or last_moments.get(seq - 1) == 412 for seq, seat in timed)
    assert all(events[v]["seat"] == 0 and events[v]["type"] != "turn_timed_out"
               for v in landed)  # the move landed at its version; its clock did nothing
    left = [e for e in events if e["type"] == "seat_left"]
    assert [(e["seat"], e["data"]) for e in left] == [(1, {"level": "random"})]
    ones = [seq for seq, seat in timed if seat == 1]
    assert left[0]["seq"] > ones[2]  # after the third timeout in a row (the default)


def test_a_seat_that_leaves_mid_hand_is_played_by_its_ai_and_the_export_verifies(
        client: Any, worker: WorkerProcess, tmp_path: Path) -> None:
    players = [*HUMANS, {"name": "Cy", "kind": "ai", "level": "random"}]
    game, tokens = create(client, players, 3600, seed=12)
    moved, left_at = {0: 0, 1: 0}, None
    ends = time.monotonic() + 30
    while (table := client.get(game).json)["status"] == "playing":
        assert time.monotonic() < ends, "the game did not end"
        seat = table["turn"]
        if seat == 2 or (seat == 1 and left_at is not None):
            time.sleep(0.02)  # the AI's turn
        elif seat == 1 and moved[1] >= 2:  # mid-hand, on its turn: the AI takes this one
            answer = client.post(f"{game}/leave", json={"replace_with": "greedy"},
                                 headers=auth(tokens[1]))
            assert answer.status_code == 200 and answer.json["players"][1]["kind"] == "ai"
            left_at = version = answer.json["version"]
            assert wait_until(lambda v=version: client.get(game).json["version"] > v, 5)
        else:
            move(client, game, tokens[seat], client.get(game, headers=auth(tokens[seat])).json)
            moved[seat] += 1
    events = verified_export(client, game, tmp_path / "game.json")
    after = [e for e in events if e["seq"] >= (left_at or 0) and e["seat"] == 1]
    assert left_at is not None and after[0]["type"] == "seat_left"
    assert any(e["type"] in ("tile_played", "tile_drawn", "passed") for e in after[1:])
    assert timeouts(events) == []


def kill_worker(worker: WorkerProcess) -> None:
    """SIGKILL the worker and its rq scheduler (a child process)."""
    for child in children(worker.pid):
        os.kill(child, signal.SIGKILL)
    worker.kill()


def test_a_clock_pending_through_kill_9_of_worker_and_redis_runs_out_once(
        tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis").start()  # AOF, fsync always
    services = build(settings_for(server.url))
    client = create_app({"TESTING": True}, services=services).test_client()
    first = WorkerProcess(server.url, ai_sweep_every_s="1")
    restarted, second = None, None
    try:
        game, _ = create(client, HUMANS, 2, seed=13)
        state = client.get(game).json
        version, seat = state["version"], state["turn"]
        assert wait_until(lambda: pending_clocks(services.queue.queue) == 1, 5)
        assert wait_until(lambda: len(children(first.pid)) == 1, 10)  # its scheduler runs
        kill_worker(first)
        server.kill()
        restarted = RedisServer(tmp_path / "redis", port=server.port).start()
        second = WorkerProcess(server.url, ai_sweep_every_s="1")
        assert wait_until(lambda: timeouts(log(client, game)) != [], 20)
        events = log(client, game)
        assert timeouts(events)[0] == (version + 1, seat)  # at the version it was set for
        assert events[version + 1]["seat"] == seat  # and the move made for it, with it
    finally:
        for process in (second, first):
            if process is not None and process.process.poll() is None:
                process.stop()
        for running in (restarted, server):
            if running is not None:
                running.stop()
