"""The event store on a real 3-master Redis Cluster: games spread over every master, play and
replay correctly through the real app, and every Lua script call touches one slot.

The cluster is three redis-server processes in cluster mode on loopback ports; the queue has a
plain redis-server of its own (QUEUE_REDIS_URL), since rq does not run on a cluster. Every
master logs every command it runs (slowlog with a 0 µs threshold), so the slot test reads
what the masters really executed.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from redis.crc import key_slot

from service.adapters.bootstrap import Services, build
from service.adapters.redis_store import (
    APPEND_LUA,
    BEGIN_LUA,
    CREATE_LUA,
    LOAD_LUA,
    game_key,
)
from service.adapters.settings import Settings
from service.adapters.turn_queue import job_id
from service.api.app import create_app
from service.entrypoints.cli import main as spinner
from service.entrypoints.redis_server import RedisServer
from service.game.audit import audit
from tests.api.driver import auth, create, play_to_end
from tests.local_cluster import LocalCluster, slot_ranges

ROOT = Path(__file__).resolve().parents[2]
GAMES = 45
PLAYED = 6
SCRIPT_COMMANDS = {b"EVAL", b"EVALSHA"}
SLOWLOG_LEN = 200_000
HIGH = 10**6  # rate limits on (their counters live in the cluster too), never reached here


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A running 3-master cluster whose masters log every command they execute."""
    with LocalCluster(tmp_path_factory.mktemp("cluster")) as running:
        for index in range(3):
            with running.node_client(index) as node:
                node.config_set("slowlog-log-slower-than", 0)
                node.config_set("slowlog-max-len", SLOWLOG_LEN)
                node.slowlog_reset()
        yield running


@pytest.fixture(scope="module")
def queue_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a plain redis-server for the rq queue."""
    with RedisServer(tmp_path_factory.mktemp("queue"), appendonly=False) as server:
        yield server.url


@pytest.fixture(scope="module")
def services(cluster: LocalCluster, queue_url: str) -> Iterator[Services]:
    """The real services, the store on the cluster (redis+cluster://), the queue apart."""
    built = build(Settings(redis_url=cluster.url, queue_redis_url=queue_url, ai_budget_s=0.02,
                           rate_limit_per_address=HIGH, rate_limit_per_token=HIGH))
    yield built
    built.store.client.close()
    built.queue.connection.close()


@pytest.fixture(scope="module")
def client(services: Services) -> FlaskClient:
    """A test client of the real app over the cluster store."""
    return create_app({"TESTING": True}, services=services).test_client()


@pytest.fixture(scope="module")
def games(client: FlaskClient) -> dict[str, dict[int, str]]:
    """GAMES new games of 2 to 4 seats (one hand each): id -> seat tokens."""
    made = {}
    for index in range(GAMES):
        game_id, tokens = create(client, seats=2 + index % 3, hands=1, seed=index)
        made[game_id] = tokens
    return made


@pytest.fixture(scope="module")
def played(client: FlaskClient, games: dict[str, dict[int, str]]) -> list[str]:
    """The first PLAYED games, played to the end by every seat over HTTP."""
    done = []
    for index, (game_id, tokens) in enumerate(list(games.items())[:PLAYED]):
        final = play_to_end(client, game_id, tokens, random.Random(index))
        assert final["status"] == "finished"
        done.append(game_id)
    return done


def owner(slot: int) -> int:
    """Return the index of the master that LocalCluster gave `slot` to."""
    return next(i for i, slots in enumerate(slot_ranges(3)) if slot in slots)


def local_keys(cluster: LocalCluster, index: int) -> set[str]:
    """Return the names of the keys that master `index` holds."""
    with cluster.node_client(index) as node:
        return {key.decode() for key in node.scan_iter(count=1000)}


def test_a_cluster_store_needs_a_queue_redis_of_its_own(cluster: LocalCluster) -> None:
    with pytest.raises(RuntimeError, match="QUEUE_REDIS_URL"):
        build(Settings(redis_url=cluster.url))


def test_the_cluster_serves_every_slot_from_three_masters(cluster: LocalCluster) -> None:
    with cluster.node_client(1) as node:
        info = node.execute_command("CLUSTER", "INFO").decode()
        assert "cluster_state:ok" in info and "cluster_slots_assigned:16384" in info
        assert "cluster_size:3" in info
        assert node.execute_command("CLUSTER", "KEYSLOT", "game:{abc}:events") == \
            key_slot(b"game:{abc}:events")


def test_games_spread_over_every_master_each_in_one_slot(
        cluster: LocalCluster, games: dict[str, dict[int, str]]) -> None:
    held = [local_keys(cluster, index) for index in range(3)]
    per_master = [0, 0, 0]
    for game_id in games:
        names = {game_key(game_id, "events"), game_key(game_id, "meta")}
        homes = [index for index, keys in enumerate(held) if names & keys]
        assert len(homes) == 1, f"game {game_id} is on masters {homes}"
        assert names <= held[homes[0]]  # both keys of a game on its one master
        assert homes[0] == owner(key_slot(game_key(game_id, "events").encode()))
        per_master[homes[0]] += 1
    assert all(count >= 5 for count in per_master), per_master
    slots = {key_slot(game_key(g, "events").encode()) for g in games}
    assert len(slots) >= len(games) - 2  # random ids: two games share one of 16384 slots by
    # chance (about 6% of runs for 45 games), three such pairs about once in 30,000 runs


def test_played_games_replay_and_verify(client: FlaskClient, services: Services,
                                        played: list[str], tmp_path: Path) -> None:
    for game_id in played:
        export = client.get(f"/v1/games/{game_id}/export")
        assert export.status_code == 200
        log = export.json["events"]
        assert audit(log) is None
        assert [e["seq"] for e in log] == list(range(1, len(log) + 1))
        assert services.store.version(game_id) == len(log)
        final = client.get(f"/v1/games/{game_id}").json
        assert client.get(f"/v1/games/{game_id}/state?version={len(log)}").json == final
        assert client.get(f"/v1/games/{game_id}/events").json["events"] == log
        path = tmp_path / f"{game_id}.json"
        path.write_text(json.dumps(export.json))
        assert spinner(["verify", str(path)]) == 0


def test_an_idempotent_move_lands_once(client: FlaskClient, services: Services,
                                       games: dict[str, dict[int, str]],
                                       played: list[str]) -> None:
    for game_id, tokens in list(games.items())[PLAYED:PLAYED + 3]:
        state = client.get(f"/v1/games/{game_id}").json
        seat = state["turn"]
        move = client.get(f"/v1/games/{game_id}", headers=auth(tokens[seat])).json[
            "legal_moves"][0]
        headers = {**auth(tokens[seat]), "Idempotency-Key": f"once-{game_id}"}
        first = client.post(f"/v1/games/{game_id}/moves", json=move, headers=headers)
        again = client.post(f"/v1/games/{game_id}/moves", json=move, headers=headers)
        assert first.status_code == again.status_code == 200
        assert again.json == first.json
        assert services.store.version(game_id) == first.json["version"] > state["version"]


def test_ai_seats_play_through_a_worker_on_the_queue_redis(
        client: FlaskClient, cluster: LocalCluster, queue_url: str, tmp_path: Path) -> None:
    env = {**os.environ, "REDIS_URL": cluster.url, "QUEUE_REDIS_URL": queue_url,
           "AI_BUDGET_S": "0.02"}
    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        worker = subprocess.Popen([sys.executable, "-m", "service.entrypoints.cli", "worker"],
                                  env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        game_id, tokens = create(client, seats=3, hands=1, seed=7,
                                 ai={1: "random", 2: "greedy"})
        state = play_human_seat(client, game_id, tokens[0], time.monotonic() + 40)
    finally:
        worker.terminate()
        worker.wait(15)
    worker_log = log_path.read_text()
    assert state["status"] == "finished", f"stuck at {state['version']}:\n{worker_log[-3000:]}"
    assert "Traceback" not in worker_log, worker_log[-3000:]
    log = client.get(f"/v1/games/{game_id}/export").json["events"]
    assert audit(log) is None
    assert {e["seat"] for e in log if e["type"] == "tile_played"} >= {1, 2}
    assert not any(k.startswith("rq:") for i in range(3) for k in local_keys(cluster, i))


def play_human_seat(client: FlaskClient, game_id: str, token: str,
                    deadline: float) -> dict[str, Any]:
    """Play seat 0's turns (the AI seats move through the worker) until the end or deadline."""
    rng = random.Random(7)
    state = client.get(f"/v1/games/{game_id}").json
    while state["status"] == "playing" and time.monotonic() < deadline:
        if state["turn"] == 0:
            mine = client.get(f"/v1/games/{game_id}", headers=auth(token)).json
            answer = client.post(f"/v1/games/{game_id}/moves", headers=auth(token),
                                 json=rng.choice(mine["legal_moves"]))
            assert answer.status_code == 200, answer.json
        else:
            time.sleep(0.02)
        state = client.get(f"/v1/games/{game_id}").json
    return state


def test_every_script_call_touches_one_slot_on_its_master(
        cluster: LocalCluster, played: list[str]) -> None:
    calls: dict[str, int] = {}
    per_master = [0, 0, 0]
    for index in range(3):
        with cluster.node_client(index) as node:
            entries = node.slowlog_get(SLOWLOG_LEN)
        assert 0 < len(entries) < SLOWLOG_LEN  # none pushed out: this is every command
        for entry in entries:
            words = entry["command"].split(b" ")
            if words[0].upper() not in SCRIPT_COMMANDS:
                continue
            sha = words[1].decode() if words[0].upper() == b"EVALSHA" else "eval"
            keys = words[3:3 + int(words[2])]
            slots = {key_slot(key) for key in keys}
            assert len(slots) == 1, f"a script touched slots {slots}: {keys}"
            assert owner(slots.pop()) == index
            calls[sha] = calls.get(sha, 0) + 1
            per_master[index] += 1
    assert all(count > 0 for count in per_master), per_master
    for script in (CREATE_LUA, APPEND_LUA, LOAD_LUA, BEGIN_LUA):
        assert calls.get(_sha(script), 0) >= 1, f"never ran:\n{script}"


def _sha(script: str) -> str:
    return hashlib.sha1(script.encode()).hexdigest()


def test_a_turn_a_dead_worker_took_is_healed_by_a_read_on_the_cluster(
        cluster: LocalCluster, queue_url: str) -> None:
    """On a cluster store a game stayed stuck 11 minutes while read every 5 s (issue 16): a
    turn whose job a worker took (rq's LMOVE into its intermediate list) and never started,
    as when it is killed right then, is queued again by a read once the stuck time is past."""
    built = build(Settings(redis_url=cluster.url, queue_redis_url=queue_url,
                           ai_stuck_after_s=0.5, rate_limit_per_address=HIGH,
                           rate_limit_per_token=HIGH))
    client = create_app({"TESTING": True}, services=built).test_client()
    game_id, _ = create(client, seats=2, hands=1, seed=11, ai={0: "greedy", 1: "greedy"})
    queue, job = built.queue.queue, job_id(game_id, built.store.version(game_id))
    try:
        assert queue.connection.lrem(queue.key, 0, job) == 1  # taken by a worker, which died
        queue.connection.lpush(queue.intermediate_queue_key, job)
        assert client.get(f"/v1/games/{game_id}").status_code == 200  # seen taken: not yet
        assert job not in queue.job_ids
        time.sleep(1.2)  # past the stuck time, and past the grace of a job just taken
        assert client.get(f"/v1/games/{game_id}").status_code == 200
        assert job in queue.job_ids
        assert job.encode() not in queue.connection.lrange(queue.intermediate_queue_key, 0, -1)
    finally:
        queue.connection.lrem(queue.key, 0, job)
        built.store.client.close()
        built.queue.connection.close()
