"""A request SIGKILLed right after claiming its Idempotency-Key (issue 16, point 5), on a real
redis-server: the retry answers 409 only while the dead process's liveness lasts (ALIVE_MS),
then is served as that same request (200, the move appended once), not after the pending
record's 30 seconds.

The fault is injected at its exact point: a child process runs the real app's request path,
whose append blocks once the key is claimed, and is killed there.
"""

from __future__ import annotations

import json
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
from tests.api.driver import auth, create

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
            assert client.post(path, json=move, headers=headers).status_code == 409  # alive
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
