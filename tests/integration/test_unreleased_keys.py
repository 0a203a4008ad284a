"""A request that fails because Redis went away (a 503) cannot release its Idempotency-Key
(issue 16, point 5), nor know whether a claim whose reply was lost was made: its process
keeps the release, and its heartbeat makes it once Redis answers again, so a retry of the
request is served within a beat or two, not refused as pending for the 30 seconds of the
pending record.

The fault is injected at its exact point: every run of the chosen scripts fails on its
connection, as when the server is down (the first maybe once Redis ran it), while other
commands (the heartbeat's) go through.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from service.adapters import liveness, redis_store
from service.adapters.bootstrap import connect_store
from service.adapters.redis_store import ABORT_LUA, APPEND_LUA, BEGIN_LUA, RedisEventStore
from service.usecases.errors import KeyPending
from service.usecases.games import Games
from service.usecases.idempotency import key_name
from service.usecases.ports import StoreUnavailable
from service.usecases.seat_views import View
from tests.integration.test_lost_reply import calls
from tests.integration.test_store_contract import IDEM, claim, pending
from tests.unit.test_usecases import AT, HUMANS, RULES, FakeTurnQueue, to_move
from tests.workers import wait_until

BEATS_S = 2 * liveness.BEAT_S + 1  # a beat or two, and some slack


@pytest.fixture
def store(redis_url: str, redis_client: redis.Redis) -> Iterator[RedisEventStore]:
    """A store over a client made as bootstrap makes it (over a flushed database)."""
    with connect_store(redis_url) as client:
        store = RedisEventStore(client)
        yield store
        store.close()


Move = tuple[Games, str, int, int, dict[str, Any]]


@pytest.fixture
def turn(store: RedisEventStore) -> Move:
    """The use cases over the store, and a two-human game's id, version, seat to move and
    that seat's first legal move."""
    games = Games(store, FakeTurnQueue(), lambda: AT)
    game_id = games.create(HUMANS, RULES, 7).game_id
    return (games, game_id, *to_move(games, game_id))


def down_for(monkeypatch: pytest.MonkeyPatch, *scripts: str,
             running_first: redis.Redis | None = None) -> None:
    """From now on, every run of `scripts` fails on its connection; before it is sent, or,
    with `running_first` (a client to watch the server with), the first once Redis ran it."""
    shas = {redis_store._sha1(script) for script in scripts}
    round_trip, first = redis_store._round_trip, [running_first]

    def failing(connection: redis.connection.AbstractConnection, args: tuple[Any, ...]) -> Any:
        if args[0] != "EVALSHA" or args[1] not in shas:
            return round_trip(connection, args)
        watching, first[0] = first[0], None
        if watching is not None:
            ran = calls(watching, "evalsha") + 1
            connection.send_command(*args)
            assert wait_until(lambda: calls(watching, "evalsha") == ran, 5.0)
        raise redis.ConnectionError("the server is down")

    monkeypatch.setattr(redis_store, "_round_trip", failing)


@pytest.fixture
def unreleased(store: RedisEventStore, redis_client: redis.Redis,
               monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """A claim, claim("h1"), whose release Redis could not take: it is down to the release
    script until the test undoes the patch given."""
    assert store.idempotency_begin(claim("h1")) is None
    with monkeypatch.context() as down:
        down_for(down, ABORT_LUA)
        store.idempotency_abort(claim("h1"))  # kept for later, not raised
        assert json.loads(redis_client.get(IDEM) or "") == pending("h1", nonce="n1")
        yield down


def test_a_release_redis_could_not_take_is_made_by_a_later_beat(
        unreleased: pytest.MonkeyPatch, redis_client: redis.Redis) -> None:
    unreleased.undo()  # Redis is back
    assert wait_until(lambda: not redis_client.exists(IDEM), BEATS_S)


def test_a_late_release_leaves_a_key_another_claim_holds_by_then(
        store: RedisEventStore, unreleased: pytest.MonkeyPatch,
        redis_client: redis.Redis) -> None:
    """The key expired, say, and another request claimed it before Redis came back."""
    redis_client.delete(IDEM)
    assert store.idempotency_begin(claim("h1", "n2")) is None
    unreleased.undo()
    assert wait_until(lambda: not store._unreleased, BEATS_S)  # the release was made
    assert json.loads(redis_client.get(IDEM) or "") == pending("h1", nonce="n2")


@pytest.mark.parametrize("fails", ["append", "claim"])
def test_a_retry_of_a_move_answered_503_is_served_once_redis_is_back(
        store: RedisEventStore, redis_client: redis.Redis, turn: Move,
        monkeypatch: pytest.MonkeyPatch, fails: str) -> None:
    """Redis went away as the move was appended, or as its key was claimed (the claim ran,
    its reply was lost): the key is left pending and its release cannot be made. A retry
    gets 409 while it is (its holder lives); the next beat releases it, and a retry lands."""
    games, game_id, version, seat, move = turn
    script = {"append": APPEND_LUA, "claim": BEGIN_LUA}[fails]
    redis_client.script_load(script)  # so that its first EVALSHA runs
    with monkeypatch.context() as down:
        down_for(down, script, ABORT_LUA,
                 running_first=redis_client if fails == "claim" else None)
        with pytest.raises(StoreUnavailable):
            games.move(game_id, seat, move, None, "k1")
    assert redis_client.exists(key_name(game_id, seat, "k1"))  # left pending
    landed: list[View] = []

    def retried() -> bool:
        try:
            landed.append(games.move(game_id, seat, move, None, "k1"))
        except KeyPending:
            return False
        return True

    assert wait_until(retried, BEATS_S)
    served = landed[0]
    assert served.table.version == store.version(game_id) > version
    assert games.move(game_id, seat, move, None, "k1").table.version == served.table.version
