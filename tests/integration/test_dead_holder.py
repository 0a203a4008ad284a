"""A request SIGKILLed right after claiming its Idempotency-Key (issue 16, point 5), on a real
redis-server: the retry waits while the dead process's liveness lasts (ALIVE_MS), then is
served as that same request (200, the move appended once), not after the pending record's
30 seconds; a retry while the holder lives answers 409 once its wait is over.

The fault is injected at its exact point: a child process runs the real app's request path,
whose append blocks once the key is claimed, and is killed there. Through gunicorn, a worker
holding a key (its pending record written as the worker writes it) is SIGKILLed.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from service.adapters import liveness
from service.adapters.bootstrap import Services, build
from service.adapters.settings import Settings
from service.api.app import create_app
from service.usecases.idempotency import body_hash, new_claim
from service.usecases.ports import pending_record
from tests.api.driver import auth, create
from tests.integration import test_faults
from tests.integration.test_faults import children, wait_for

gunicorn = test_faults.gunicorn  # its fixture, by this name here

KEY = "k-dead"
CHILD = textwrap.dedent("""
    import json, sys, time
    from service.adapters.bootstrap import build
    from service.adapters.settings import Settings
    from service.api.app import create_app

    url, path, token, move, key = sys.argv[1:]
    services = build(Settings(redis_url=url, rate_limit_per_token=0, rate_limit_per_address=0))
    def stall(*args, **kwargs):
        print("claimed", flush=True)
        time.sleep(600)
    services.store.append = stall
    create_app({"TESTING": True}, services=services).test_client().post(
        path, json=json.loads(move),
        headers={"Authorization": f"Bearer {token}", "Idempotency-Key": key})
""")


@pytest.fixture
def services(redis_url: str, redis_client: redis.Redis) -> Iterator[Services]:
    """The real services over a flushed Redis database; their store closed afterwards."""
    built = build(Settings(redis_url=redis_url, rate_limit_per_token=0,
                           rate_limit_per_address=0))
    yield built
    built.store.close()


def move_of(client: Any, game_id: str, tokens: dict[int, str]) -> tuple[int, int, Any]:
    """Return the game's version, the seat to move and its first legal move."""
    state = client.get(f"/v1/games/{game_id}").json
    mine = client.get(f"/v1/games/{game_id}", headers=auth(tokens[state["turn"]])).json
    return state["version"], state["turn"], mine["legal_moves"][0]


def test_a_retry_of_a_request_killed_after_its_claim_is_served_once_its_holder_is_dead(
        services: Services, redis_url: str) -> None:
    client = create_app({"TESTING": True}, services=services).test_client()
    game_id, tokens = create(client)
    version, seat, move = move_of(client, game_id, tokens)
    path, token = f"/v1/games/{game_id}/moves", tokens[seat]
    with subprocess.Popen([sys.executable, "-c", CHILD, redis_url, path, token,
                           json.dumps(move), KEY], stdout=subprocess.PIPE, text=True) as child:
        try:
            assert child.stdout is not None and child.stdout.readline() == "claimed\n"
            headers = {**auth(token), "Idempotency-Key": KEY}
            pending = client.post(path, json=move, headers=headers)  # its holder is alive
            assert pending.status_code == 409 and pending.headers["Retry-After"] == "1"
            assert "still being handled" in pending.json["detail"]
        finally:
            child.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    while (answer := client.post(path, json=move, headers=headers)).status_code == 409:
        assert time.monotonic() - killed < liveness.ALIVE_MS / 1000 + 1
        time.sleep(0.05)
    assert answer.status_code == 200
    assert answer.json["version"] == services.store.version(game_id) > version
    acted = [e for e in services.store.read(game_id, version) if e["seat"] == seat]
    assert len(acted) == 1  # appended once
    again = client.post(path, json=move, headers=headers)
    assert again.status_code == 200 and again.json == answer.json



def call(port: int, method: str, path: str, body: Any = None,
         headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """Send one request on a connection of its own; return the status and JSON (0, None if
    the connection was cut)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        conn.request(method, path, None if body is None else json.dumps(body),
                     {"Content-Type": "application/json", **(headers or {})})
        answer = conn.getresponse()
        return answer.status, json.loads(answer.read())
    except (OSError, http.client.HTTPException):
        return 0, None
    finally:
        conn.close()


def test_a_gunicorn_worker_killed_holding_a_key_leaves_it_to_the_retry_once_dead(
        gunicorn: tuple[int, subprocess.Popen[bytes]], redis_url: str) -> None:
    """The worker (gevent) beats its liveness; once it is SIGKILLed, the key it held (its
    pending record written as the worker writes it) is served by the next worker."""
    port, master = gunicorn
    players = [{"name": f"P{s}", "kind": "human"} for s in range(2)]
    body = {"players": players, "rules": {"hands": 1}, "seed": 1}
    status, created = call(port, "POST", "/v1/games", body)
    assert status == 201, created
    game_id, tokens = created["game_id"], {s["seat"]: s["token"] for s in created["seats"]}
    path, events = f"/v1/games/{game_id}/moves", f"game:{{{game_id}}}:events"
    claim = {**auth(tokens[0]), "Idempotency-Key": "k0"}
    assert call(port, "POST", path, {"action": "?"}, claim)[0] == 400  # a claim: it beats
    (worker,) = children(master.pid)
    state = call(port, "GET", f"/v1/games/{game_id}")[1]
    seat = state["turn"]
    move = call(port, "GET", f"/v1/games/{game_id}", None, auth(tokens[seat]))[1]["legal_moves"][0]
    headers = {**auth(tokens[seat]), "Idempotency-Key": "k1"}
    with redis.Redis.from_url(redis_url, decode_responses=True) as client:
        (alive,) = client.keys(f"holder:*:{worker}:*")  # the worker's, made by its claim
        holder = alive.removeprefix("holder:").removesuffix(":alive")
        client.pexpire(alive, 200)  # beaten again by the worker's greenlet, or gone
        time.sleep(liveness.BEAT_S + 0.3)
        assert client.exists(alive)
        held = new_claim(game_id, seat, "k1", body_hash(move))
        client.set(held.name, pending_record(held, holder), ex=30)
        assert call(port, "POST", path, move, headers)[0] == 409  # the worker lives
        os.kill(worker, signal.SIGKILL)
        killed = time.monotonic()
        wait_for(lambda: children(master.pid) not in ([], [worker]), 20, "a new worker")
        while (answer := call(port, "POST", path, move, headers))[0] in (0, 409):
            assert time.monotonic() - killed < liveness.ALIVE_MS / 1000 + 5
            time.sleep(0.05)
        assert answer[0] == 200, answer
        assert answer[1]["version"] == client.xlen(events) == state["version"] + 1
    assert call(port, "POST", path, move, headers) == answer
