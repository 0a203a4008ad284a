"""An append or a claim whose reply was lost (issue 16, points 2 and 5), on a real
redis-server.

The fault is injected at its exact point: the first EVALSHA of the script is sent and run by
Redis, then its reply is left unread and the connection fails, as when the server dies right
after running it. redis-py's retry policy (the one bootstrap gives the store) sends the
script again on a new connection, which finds the log one append ahead, or the key claimed.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from service.adapters import redis_store
from service.adapters.bootstrap import connect_store
from service.adapters.outbox import DRAIN, OUTBOX
from service.adapters.redis_store import APPEND_LUA, BEGIN_LUA, CREATE_LUA, RedisEventStore
from service.usecases.ports import ConcurrencyError
from tests.integration.test_store_contract import IDEM, claim, events, pending, seqs
from tests.workers import wait_until

DONE = json.dumps({"state": "done", "body_hash": "h1", "version": 2})


def calls(client: redis.Redis, command: str) -> int:
    """Return how many times the server ran `command` since its stats were reset."""
    stats: dict[str, Any] = client.info("commandstats")
    return int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))


@pytest.fixture
def store(redis_url: str, redis_client: redis.Redis) -> Iterator[RedisEventStore]:
    """A store over a client made as bootstrap makes it, the append script already loaded
    (so its first EVALSHA runs rather than answering NOSCRIPT)."""
    redis_client.script_load(APPEND_LUA)
    with connect_store(redis_url) as client:
        yield RedisEventStore(client)


def lose_the_next_reply(monkeypatch: pytest.MonkeyPatch, watcher: redis.Redis,
                        script: str = APPEND_LUA) -> list[tuple[Any, ...]]:
    """From now on, the first reply of `script` goes lost once the server has run it;
    return the list of that script's runs sent from now on, which fills as they are."""
    sha = redis_store._sha1(script)
    sent: list[tuple[Any, ...]] = []
    round_trip = redis_store._round_trip

    def lossy(connection: redis.connection.AbstractConnection, args: tuple[Any, ...]) -> Any:
        if args[:2] != ("EVALSHA", sha):
            return round_trip(connection, args)
        sent.append(args)
        if len(sent) > 1:
            return round_trip(connection, args)
        ran = calls(watcher, "evalsha") + 1
        connection.send_command(*args)
        assert wait_until(lambda: calls(watcher, "evalsha") == ran, 5.0)
        raise redis.ConnectionError("the server went away before its reply")

    monkeypatch.setattr(redis_store, "_round_trip", lossy)
    return sent


def test_a_retried_append_finds_its_own_append_and_returns(
        store: RedisEventStore, redis_client: redis.Redis,
        monkeypatch: pytest.MonkeyPatch) -> None:
    store.create("g1", events(1, 2), {})
    store.idempotency_begin(claim("h1"))
    store.close()  # its heartbeat's SETs would count below
    redis_client.config_resetstat()
    sent = lose_the_next_reply(monkeypatch, redis_client)
    store.append("g1", 2, events(3, 4), snapshot={"version": 3, "state": {"turn": 1}},
                 idempotency=(claim("h1"), DONE), append_id=secrets.token_hex(8))
    assert len(sent) == 2  # sent, run, its reply lost; sent again
    assert store.read("g1") == events(1, 4)  # exactly once
    assert store.load("g1") == ({"version": 3, "state": {"turn": 1}}, events(4, 4))
    assert json.loads(redis_client.get(IDEM) or "") == json.loads(DONE)
    # the first run's two XADDs only: a run again past the append-id check would add them
    # again (SETs are not counted: any live store's holder heartbeat SETs on this server)
    assert calls(redis_client, "xadd") == 2


def test_a_retried_creation_pushes_its_notifications_once_and_has_a_drain_queued(
        store: RedisEventStore, redis_client: redis.Redis,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The creation script pushed its outbox entries and marked a drain, and the reply that
    said so was lost; its run again finds the game its own, writes nothing again, and says a
    drain is to be queued (else none would be until the mark's lease ran out)."""
    redis_client.script_load(CREATE_LUA)
    sent = lose_the_next_reply(monkeypatch, redis_client, CREATE_LUA)
    marked = store.create("g1", events(1, 2), {}, append_id=secrets.token_hex(8),
                          outbox=["n1", "n2"])
    assert len(sent) == 2 and marked is True
    assert store.read("g1") == events(1, 2)
    assert redis_client.lrange(OUTBOX, 0, -1) == [b"n1", b"n2"]
    assert redis_client.get(DRAIN) == b"queued"


def test_a_retried_append_pushes_its_notifications_once_and_has_a_drain_queued(
        store: RedisEventStore, redis_client: redis.Redis,
        monkeypatch: pytest.MonkeyPatch) -> None:
    store.create("g1", events(1, 2), {})
    sent = lose_the_next_reply(monkeypatch, redis_client)
    marked = store.append("g1", 2, events(3, 3), append_id=secrets.token_hex(8),
                          outbox=["n3"])
    assert len(sent) == 2 and marked is True
    assert store.read("g1") == events(1, 3)
    assert redis_client.lrange(OUTBOX, 0, -1) == [b"n3"]
    assert redis_client.get(DRAIN) == b"queued"
    assert store.append("g1", 3, events(4, 4), outbox=["n4"]) is False  # still marked


def test_a_retried_append_finds_another_writers_append_and_raises(
        store: RedisEventStore, redis_client: redis.Redis, redis_url: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    store.create("g1", events(1, 2), {})
    store.idempotency_begin(claim("h1"))
    with connect_store(redis_url) as other_client:
        RedisEventStore(other_client).append("g1", 2, events(3, 3),
                                             append_id=secrets.token_hex(8))
    sent = lose_the_next_reply(monkeypatch, redis_client)
    with pytest.raises(ConcurrencyError) as raised:
        store.append("g1", 2, events(3, 3), idempotency=(claim("h1"), DONE),
                     append_id=secrets.token_hex(8))
    assert raised.value.current_version == 3
    assert len(sent) == 2
    assert seqs(store.read("g1")) == [1, 2, 3]
    assert json.loads(redis_client.get(IDEM) or "") == pending("h1")


def test_a_claim_sent_again_finds_itself_claimed_not_pending(
        store: RedisEventStore, redis_client: redis.Redis,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Its first run claimed the key; the second finds this very claim's record (its nonce)."""
    redis_client.script_load(BEGIN_LUA)
    sent = lose_the_next_reply(monkeypatch, redis_client, BEGIN_LUA)
    assert store.idempotency_begin(claim("h1")) is None
    assert len(sent) == 2
    assert json.loads(redis_client.get(IDEM) or "") == pending("h1", nonce="n1")
    assert store.idempotency_begin(claim("h1", "n2")) == pending("h1", nonce="n1")
