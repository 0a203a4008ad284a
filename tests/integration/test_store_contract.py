"""One contract, run against the in-memory store and the Redis store (a real redis-server)."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from typing import Any
from unittest.mock import ANY

import pytest
import redis
from redis.backoff import NoBackoff
from redis.crc import key_slot
from redis.retry import Retry

from service.adapters import liveness
from service.adapters.bootstrap import build, connect_store
from service.adapters.redis_store import RedisEventStore
from service.adapters.settings import Settings
from service.entrypoints.redis_server import free_port
from service.game import events as ev
from service.usecases.ports import (
    ConcurrencyError,
    EventStore,
    KeyClaim,
    KeyTaken,
    StoreError,
    StoreUnavailable,
)
from tests.local_cluster import LocalCluster
from tests.memory_store import InMemoryEventStore

IDEM = "game:{g1}:idem:0:k1"
UNPLAYED_S = 0.4
"""How long a `brief` store keeps a game no client moved in."""


def claim(body_hash: str, nonce: str = "n1", name: str = IDEM) -> KeyClaim:
    """Return a request's claim of the key IDEM (or `name`) for a body of hash `body_hash`;
    its nonce tells it from another request's claim."""
    return KeyClaim(name, body_hash, nonce)


def pending(body_hash: str, holder: Any = ANY, nonce: Any = ANY) -> dict[str, Any]:
    """Return the record of a key pending for a body (held by `holder` for the claim of
    `nonce`, any by default)."""
    return {"state": "pending", "body_hash": body_hash, "holder": holder, "nonce": nonce}


def event(seq: int, **data: Any) -> dict[str, Any]:
    """Return a recorded event numbered `seq` (the store never checks hashes)."""
    return {"seq": seq, "type": "passed", "at": "2024-05-01T12:00:00Z", "seat": seq % 4,
            "data": {"n": seq, **data}, "hash": f"{seq:064x}"}


def events(first: int, last: int) -> list[dict[str, Any]]:
    """Return the events numbered first..last."""
    return [event(seq) for seq in range(first, last + 1)]


def ended_log(chained: bool) -> list[dict[str, Any]]:
    """Return a log of five events, the last one `game_ended`: with the hash chain of API.md
    if `chained`, else with made-up hashes."""
    log = events(1, 4) + [{**event(5), "type": ev.GAME_ENDED}]
    previous = ev.GENESIS
    for entry in log if chained else []:
        entry["hash"] = previous = ev.event_hash(previous, entry)
    return log


def seqs(log: list[dict[str, Any]]) -> list[int]:
    """Return the seq of each event."""
    return [e["seq"] for e in log]


def later(delay_s: float, action: Any) -> threading.Thread:
    """Start a thread that runs `action` after `delay_s` seconds."""
    thread = threading.Thread(target=lambda: (time.sleep(delay_s), action()))
    thread.start()
    return thread


class StoreContract:
    """What every EventStore does; subclasses provide the `store` fixture."""

    @pytest.fixture
    def sibling(self, store: EventStore) -> Iterator[EventStore]:
        """The same data as another process sees it: a store of its own, its own holder."""
        if isinstance(store, InMemoryEventStore):
            yield store.sibling()
            return
        assert isinstance(store, RedisEventStore)
        with closing(RedisEventStore(store.client)) as other:
            yield other

    @pytest.fixture
    def brief(self, store: EventStore) -> Iterator[EventStore]:
        """A store (over the same data) that keeps a game no client moved in UNPLAYED_S."""
        if isinstance(store, InMemoryEventStore):
            yield InMemoryEventStore(unplayed_game_ttl_s=UNPLAYED_S)
            return
        assert isinstance(store, RedisEventStore)
        with closing(RedisEventStore(store.client, unplayed_game_ttl_s=UNPLAYED_S)) as other:
            yield other

    def test_a_game_no_client_moved_in_is_forgotten_after_its_time(
            self, brief: EventStore) -> None:
        """An AI's appends (not `moved_in`), its snapshot too, go with the game; a client's
        move keeps the game for good, with whatever is appended later."""
        for game_id in ("g1", "g2"):
            brief.create(game_id, events(1, 2), {"a": game_id})
            brief.append(game_id, 2, events(3, 3), snapshot={"version": 2, "state": {}})
        brief.append("g2", 3, events(4, 4), moved_in=True)
        brief.append("g2", 4, events(5, 5), snapshot={"version": 4, "state": {}})
        time.sleep(UNPLAYED_S + 0.2)
        assert brief.version("g1") == 0 and brief.meta("g1") == {}
        assert brief.read("g1") == [] and brief.load("g1") == (None, [])
        assert brief.read_known("g1", 2) is None and brief.read_known("g2", 3) == events(4, 5)
        assert brief.read("g2") == events(1, 5) and brief.meta("g2") == {"a": "g2"}
        assert brief.load("g2") == ({"version": 4, "state": {}}, events(5, 5))
        brief.create("g1", events(1, 1), {})  # its id is free again
        assert brief.version("g1") == 1

    @pytest.mark.parametrize("chained", [True, False], ids=["chained", "made-up-hashes"])
    def test_an_ended_games_log_reads_as_before_and_takes_no_more(
            self, store: EventStore, chained: bool) -> None:
        log = ended_log(chained)
        store.create("g1", log[:2], {"a": "1"})
        store.append("g1", 2, log[2:3], snapshot={"version": 3, "state": {}}, moved_in=True)
        store.append("g1", 3, log[3:], append_id="last")
        assert store.read("g1") == log and store.read("g1", 1, 3) == log[1:3]
        assert store.read("g1", after=5) == [] and store.read("g1", after=4) == log[4:]
        assert store.read_known("g1", 5) == [] and store.read_known("g1", 3) == log[3:]
        snapshot, rest = store.load("g1")
        assert rest == log[(snapshot or {"version": 0})["version"]:]
        assert store.version("g1") == 5 and store.meta("g1") == {"a": "1"}
        for expected in (5, 3):
            with pytest.raises(ConcurrencyError) as refused:
                store.append("g1", expected, events(expected + 1, expected + 1))
            assert refused.value.current_version == 5
        with pytest.raises(StoreError):
            store.create("g1", events(1, 1), {})
        assert store.read("g1") == log

    def test_create_makes_a_game_with_its_meta(self, store: EventStore) -> None:
        assert store.version("g1") == 0 and store.meta("g1") == {}
        store.create("g1", events(1, 2), {"seat0": "h0", "seed": "42"})
        assert store.version("g2") == 0
        assert store.meta("g1") == {"seat0": "h0", "seed": "42"}
        assert store.version("g1") == 2

    def test_create_refuses_an_existing_game(self, store: EventStore) -> None:
        store.create("g1", events(1, 2), {"a": "1"})
        with pytest.raises(StoreError):
            store.create("g1", events(1, 1), {"a": "2"})
        assert store.meta("g1") == {"a": "1"} and store.version("g1") == 2

    def test_a_retried_creation_that_landed_returns_and_writes_nothing_again(
            self, store: EventStore) -> None:
        """Its reply was lost and the client sent it again; another creation of that id, or
        one with no append id, is still refused."""
        store.create("g1", events(1, 2), {"a": "1"}, append_id="ours")
        store.append("g1", 2, events(3, 3))
        store.create("g1", events(1, 2), {"a": "1"}, append_id="ours")
        assert store.read("g1") == events(1, 3) and store.meta("g1") == {"a": "1"}
        for other in ("theirs", None):
            with pytest.raises(StoreError):
                store.create("g1", events(1, 2), {"a": "2"}, append_id=other)
        store.create("g2", events(1, 1), {})
        with pytest.raises(StoreError):
            store.create("g2", events(1, 1), {}, append_id="ours")
        assert store.read("g2") == events(1, 1)

    @pytest.mark.parametrize("first", [[], [event(2)], [event(1), event(3)]])
    def test_create_needs_events_numbered_from_one(self, store: EventStore,
                                                   first: list[dict[str, Any]]) -> None:
        with pytest.raises(StoreError):
            store.create("g1", first, {})
        assert store.version("g1") == 0 and store.meta("g1") == {}  # nothing of it was kept

    def test_append_keeps_events_in_order_and_intact(self, store: EventStore) -> None:
        store.create("g1", events(1, 2), {})
        appended = [event(3, name="Zoë", tiles=["5-S", "9-9"]), event(4, nested={"a": [1]})]
        store.append("g1", 2, appended)
        assert store.read("g1") == events(1, 2) + appended
        assert store.version("g1") == 4

    def test_read_pages_with_after_and_until(self, store: EventStore) -> None:
        store.create("g1", events(1, 5), {})
        assert seqs(store.read("g1", after=2)) == [3, 4, 5]
        assert seqs(store.read("g1", 1, 3)) == [2, 3]
        assert seqs(store.read("g1", until=2)) == [1, 2]
        assert store.read("g1", after=5) == [] and store.read("g1", 3, 3) == []

    def test_an_unknown_game_is_empty(self, store: EventStore) -> None:
        assert store.read("nope") == [] and store.version("nope") == 0
        assert store.read_known("nope", 0) is None
        assert store.load("nope") == (None, [])

    def test_append_at_a_stale_version_raises_with_the_current_one(
            self, store: EventStore) -> None:
        store.create("g1", events(1, 3), {})
        for stale in (2, 4):
            with pytest.raises(ConcurrencyError) as raised:
                store.append("g1", stale, events(stale + 1, stale + 1))
            assert raised.value.current_version == 3
        assert store.version("g1") == 3

    def test_append_to_an_unknown_game_raises(self, store: EventStore) -> None:
        with pytest.raises(StoreError):
            store.append("nope", 0, events(1, 1))
        assert store.version("nope") == 0 and store.meta("nope") == {}

    def test_append_refuses_misnumbered_events(self, store: EventStore) -> None:
        store.create("g1", events(1, 3), {})
        with pytest.raises(StoreError) as raised:
            store.append("g1", 3, [event(5)])
        assert not isinstance(raised.value, ConcurrencyError)
        assert store.version("g1") == 3

    @pytest.mark.parametrize("with_ids", [False, True])
    def test_of_racing_appends_exactly_one_lands(self, store: EventStore,
                                                 with_ids: bool) -> None:
        store.create("g1", events(1, 2), {})
        start = threading.Barrier(16)

        def race(runner: int) -> int | None:
            start.wait()
            try:
                store.append("g1", 2, [event(3, runner=runner)],
                             append_id=f"id{runner}" if with_ids else None)
            except ConcurrencyError as lost:
                return lost.current_version
            return None

        with ThreadPoolExecutor(16) as pool:
            outcomes = list(pool.map(race, range(16)))
        assert sorted(outcomes, key=str) == [3] * 15 + [None]
        assert store.read("g1", 2)[0]["data"]["runner"] == outcomes.index(None)
        assert store.version("g1") == 3

    def test_load_returns_the_latest_snapshot_and_the_events_after_it(
            self, store: EventStore) -> None:
        store.create("g1", events(1, 2), {})
        assert store.load("g1") == (None, events(1, 2))
        store.append("g1", 2, events(3, 4), snapshot={"version": 3, "state": {"turn": 1}})
        assert store.load("g1") == ({"version": 3, "state": {"turn": 1}}, events(4, 4))
        store.append("g1", 4, events(5, 6), snapshot={"version": 6, "state": {"turn": 2}})
        store.append("g1", 6, events(7, 7))
        assert store.load("g1") == ({"version": 6, "state": {"turn": 2}}, events(7, 7))

    def test_idempotency_begin_claims_a_key_once(self, store: EventStore) -> None:
        assert store.idempotency_begin(claim("h1")) is None
        assert store.idempotency_begin(claim("h2", "n2")) == pending("h1", nonce="n1")

    def test_a_claim_sent_again_finds_itself_claimed_and_no_other_claim_does(
            self, store: EventStore) -> None:
        """Its reply was lost and it was sent again: the same nonce is the same claim; another
        request's claim, of this very process and body, finds the key pending."""
        assert store.idempotency_begin(claim("h1")) is None
        assert store.idempotency_begin(claim("h1")) is None
        assert store.idempotency_begin(claim("h1", "n2")) == pending("h1", nonce="n1")

    def test_idempotency_finish_stores_the_final_record(self, store: EventStore) -> None:
        store.idempotency_begin(claim("h1"))
        done = {"state": "done", "body_hash": "h1", "problem": {"status": 422}}
        assert store.idempotency_finish(claim("h1"), json.dumps(done)) is None
        assert store.idempotency_begin(claim("h1", "n2")) == done
        expired = claim("h1", name="game:{g1}:idem:0:k2")
        store.idempotency_finish(expired, json.dumps(done))  # its claim expired
        assert store.idempotency_begin(expired._replace(nonce="n2")) == done

    def test_idempotency_finish_of_another_claim_of_the_process_keeps_the_key(
            self, store: EventStore) -> None:
        store.idempotency_begin(claim("h1"))
        done = {"state": "done", "body_hash": "h1", "version": 2}
        assert store.idempotency_finish(claim("h1", "n2"), json.dumps(done)) == pending("h1")
        assert store.idempotency_begin(claim("h1", "n3")) == pending("h1", nonce="n1")

    def test_idempotency_abort_releases_only_the_claims_pending_key(
            self, store: EventStore) -> None:
        store.idempotency_begin(claim("h1"))
        store.idempotency_abort(claim("h1", "n2"))  # another request's: kept
        store.idempotency_abort(claim("h1"))
        assert store.idempotency_begin(claim("h2", "n2")) is None
        store.idempotency_finish(claim("h2", "n2"), json.dumps({"state": "done",
                                                                "body_hash": "h2"}))
        store.idempotency_abort(claim("h2", "n2"))
        assert store.idempotency_begin(claim("h3", "n3")) == {"state": "done",
                                                              "body_hash": "h2"}

    def test_a_pending_key_expires(self, store: EventStore) -> None:
        store.idempotency_begin(claim("h1"), ttl_pending=1)
        time.sleep(1.2)
        assert store.idempotency_begin(claim("h2", "n2")) is None

    def test_append_sets_the_idempotency_record_in_the_same_step(
            self, store: EventStore) -> None:
        store.create("g1", events(1, 2), {})
        store.idempotency_begin(claim("h1"))
        done = {"state": "done", "body_hash": "h1", "version": 2}
        with pytest.raises(ConcurrencyError):
            store.append("g1", 1, events(2, 2), idempotency=(claim("h1"), json.dumps(done)))
        assert store.idempotency_begin(claim("h1", "n2")) == pending("h1", nonce="n1")
        store.append("g1", 2, events(3, 3), idempotency=(claim("h1"), json.dumps(done)))
        assert store.idempotency_begin(claim("h1", "n2")) == done

    def test_an_append_whose_key_is_gone_lands_with_its_record(
            self, store: EventStore) -> None:
        """Its pending record expired, say: no other claim holds the key, none appended."""
        store.create("g1", events(1, 2), {})
        done = {"state": "done", "body_hash": "h1", "version": 2}
        store.append("g1", 2, events(3, 3), idempotency=(claim("h1"), json.dumps(done)))
        assert store.read("g1") == events(1, 3)
        assert store.idempotency_begin(claim("h1", "n2")) == done

    @pytest.mark.parametrize("appends_after", [0, 2])
    def test_a_retried_append_that_landed_returns_and_writes_nothing_again(
            self, store: EventStore, appends_after: int) -> None:
        """Its reply was lost and the client sent it again, maybe after other appends."""
        store.create("g1", events(1, 2), {})
        store.idempotency_begin(claim("h1"))
        done = json.dumps({"state": "done", "body_hash": "h1", "version": 2})
        ours = {"snapshot": {"version": 3, "state": {"turn": 1}},
                "idempotency": (claim("h1"), done), "append_id": "ours"}
        store.append("g1", 2, events(3, 4), **ours)
        for version in range(4, 4 + appends_after):
            store.append("g1", version, events(version + 1, version + 1), append_id=f"x{version}",
                         snapshot={"version": version + 1, "state": {"turn": 2}})
        before = store.load("g1")
        other = json.dumps({"state": "done", "body_hash": "h1", "problem": {"status": 409}})
        store.append("g1", 2, events(3, 4), **{**ours, "idempotency": (claim("h1"), other)})
        # the retry (a record unlike the first, to see it is not written): no ConcurrencyError,
        # nor KeyTaken though the key is no longer pending (the append id is looked at first)
        assert store.read("g1") == events(1, 4 + appends_after)
        assert store.load("g1") == before
        assert store.idempotency_begin(claim("h1", "n2")) == json.loads(done)

    def test_an_append_id_that_is_not_ours_still_raises(self, store: EventStore) -> None:
        store.create("g1", events(1, 2), {})
        store.append("g1", 2, [event(3, writer="theirs")], append_id="theirs")
        store.append("g1", 3, events(4, 4))  # without an append id, as before
        for expected in (2, 3):  # entries with another id, and with none
            with pytest.raises(ConcurrencyError) as raised:
                store.append("g1", expected, events(expected + 1, expected + 1),
                             append_id="ours")
            assert raised.value.current_version == 4
        with pytest.raises(ConcurrencyError) as raised:
            store.append("g1", 1, events(2, 2), append_id="ours")  # an entry of create
        assert raised.value.current_version == 4
        with pytest.raises(ConcurrencyError) as raised:  # ahead of the log
            store.append("g1", 6, events(7, 7), append_id="theirs")
        assert raised.value.current_version == 4
        assert store.read("g1")[2]["data"] == {"n": 3, "writer": "theirs"}
        assert store.version("g1") == 4

    def test_events_read_alike_with_and_without_append_ids(self, store: EventStore) -> None:
        store.create("g1", events(1, 2), {})
        store.append("g1", 2, events(3, 5), append_id="a1")
        store.append("g1", 5, events(6, 6))
        store.append("g1", 6, events(7, 8), append_id="a2",
                     snapshot={"version": 7, "state": {}})
        assert store.read("g1") == events(1, 8)
        assert store.read("g1", 2, 4) == events(3, 4)
        assert store.load("g1") == ({"version": 7, "state": {}}, events(8, 8))
        assert store.wait_for_events("g1", 5, 5000) == events(6, 8)

    def test_wait_for_events_returns_events_already_there(self, store: EventStore) -> None:
        store.create("g1", events(1, 2), {})
        assert seqs(store.wait_for_events("g1", 0, 5000)) == [1, 2]

    def test_wait_for_events_wakes_on_an_append(self, store: EventStore) -> None:
        store.create("g1", events(1, 1), {})
        writer = later(0.1, lambda: store.append("g1", 1, events(2, 3)))
        assert seqs(store.wait_for_events("g1", 1, 5000)) == [2, 3]
        writer.join()

    def test_wait_for_events_times_out_empty(self, store: EventStore) -> None:
        store.create("g1", events(1, 1), {})
        assert store.wait_for_events("g1", 1, 50) == []
        assert store.wait_for_events("nope", 0, 50) == []

    def test_a_pending_key_names_its_live_holder_to_another_process(
            self, store: EventStore, sibling: EventStore) -> None:
        store.idempotency_begin(claim("h1"))
        seen = sibling.idempotency_begin(claim("h1", "n2"))
        assert seen == pending("h1", nonce="n1")
        assert store.idempotency_begin(claim("h1", "n3")) == seen
        assert sibling.holder_alive(seen["holder"]) and store.holder_alive(seen["holder"])
        sibling.idempotency_begin(claim("h1", name=IDEM + "2"))
        assert store.idempotency_begin(claim("h1", "n2", IDEM + "2"))["holder"] != seen["holder"]
        gone = {**seen, "holder": "gone:1:x"}
        assert sibling.idempotency_begin(claim("h1", "n2"), orphan=gone) == seen

    def test_a_key_pending_for_a_dead_holder_is_claimed_over_once(
            self, store: EventStore, sibling: EventStore) -> None:
        """Only while that holder's record is there."""
        sibling.idempotency_begin(claim("h1"))
        dead = store.idempotency_begin(claim("h1", "n2"))
        sibling.close()  # as if SIGKILLed: its liveness is gone
        assert store.holder_alive(dead["holder"]) is False
        assert store.idempotency_begin(claim("h1", "n2"), orphan=dead) is None
        ours = store.idempotency_begin(claim("h1", "n3"), orphan=dead)
        assert ours == pending("h1", nonce="n2") and ours["holder"] != dead["holder"]
        assert store.holder_alive(ours["holder"])

    def test_a_dead_holder_still_running_neither_answers_nor_releases_a_key_claimed_over(
            self, store: EventStore, sibling: EventStore) -> None:
        sibling.idempotency_begin(claim("h1"))
        dead = store.idempotency_begin(claim("h1", "n2"))
        sibling.close()  # thought dead, yet its request goes on
        store.idempotency_begin(claim("h1", "n2"), orphan=dead)
        ours = store.idempotency_begin(claim("h1", "n3"))
        sibling.idempotency_abort(claim("h1"))
        stale = json.dumps({"state": "done", "body_hash": "h1", "problem": {"status": 412}})
        assert sibling.idempotency_finish(claim("h1"), stale) == ours
        done = {"state": "done", "body_hash": "h1", "version": 3}
        assert store.idempotency_finish(claim("h1", "n2"), json.dumps(done)) is None
        assert sibling.idempotency_finish(claim("h1"), stale) == done
        assert store.idempotency_begin(claim("h1", "n3")) == done

    def test_a_dead_holder_still_running_appends_nothing_under_a_key_claimed_over(
            self, store: EventStore, sibling: EventStore) -> None:
        """Its append raises KeyTaken with the key's record (the taker's, pending or done),
        and writes nothing: the taker may append the very same move (no double append)."""
        store.create("g1", events(1, 2), {})
        sibling.idempotency_begin(claim("h1"))
        dead = store.idempotency_begin(claim("h1", "n2"))
        sibling.close()  # thought dead, yet its request goes on
        store.idempotency_begin(claim("h1", "n2"), orphan=dead)
        taker = store.idempotency_begin(claim("h1", "n3"))
        done = json.dumps({"state": "done", "body_hash": "h1", "version": 2})
        late = {"idempotency": (claim("h1"), done), "append_id": "late",
                "snapshot": {"version": 3, "state": {}}}
        with pytest.raises(KeyTaken) as taken:
            sibling.append("g1", 2, events(3, 3), **late)
        assert taken.value.record == taker == pending("h1", nonce="n2")
        assert store.load("g1") == (None, events(1, 2))
        store.append("g1", 2, events(3, 3), idempotency=(claim("h1", "n2"), done),
                     append_id="taker")
        with pytest.raises(KeyTaken) as taken:  # on the log as it is now, after the taker's
            sibling.append("g1", 3, events(4, 4), **late)
        assert taken.value.record == json.loads(done)
        assert store.load("g1") == (None, events(1, 3))
        assert store.idempotency_begin(claim("h1", "n4")) == json.loads(done)

    def test_idempotency_abort_leaves_a_key_another_process_holds(
            self, store: EventStore, sibling: EventStore) -> None:
        sibling.idempotency_begin(claim("h1"))
        store.idempotency_abort(claim("h1"))
        held = store.idempotency_begin(claim("h1", "n2"))
        assert held == pending("h1", nonce="n1") and sibling.holder_alive(held["holder"])
        sibling.idempotency_abort(claim("h1"))
        assert store.idempotency_begin(claim("h1", "n2")) is None

    def test_a_stream_ticket_is_kept_by_its_hash_for_its_game_until_it_expires(
            self, store: EventStore) -> None:
        store.put_ticket("g1", "t" * 64, "h" * 64, 0.3)
        assert store.ticket_token("g1", "t" * 64) == "h" * 64
        assert store.ticket_token("g2", "t" * 64) is None  # another game's
        assert store.ticket_token("g1", "u" * 64) is None
        time.sleep(0.35)
        assert store.ticket_token("g1", "t" * 64) is None

    def test_ping(self, store: EventStore) -> None:
        assert store.ping() is True


class TestInMemoryStore(StoreContract):
    @pytest.fixture
    def store(self) -> InMemoryEventStore:
        return InMemoryEventStore()



class TestRedisStore(StoreContract):
    @pytest.fixture
    def store(self, redis_client: redis.Redis) -> Iterator[RedisEventStore]:
        with closing(RedisEventStore(redis_client)) as store:
            yield store

    def test_a_holder_is_alive_while_it_beats(self, store: RedisEventStore,
                                             redis_client: redis.Redis) -> None:
        """A process's liveness key lives ALIVE_MS after each beat, one every BEAT_S, and
        goes when it closes."""
        store.idempotency_begin(claim("h1"))
        holder = store.idempotency_begin(claim("h1", "n2"))["holder"]
        alive = liveness.alive_key(holder)
        assert 0 < redis_client.pttl(alive) <= liveness.ALIVE_MS
        redis_client.pexpire(alive, 200)  # as if its last beat were late
        time.sleep(liveness.BEAT_S + 0.3)
        assert 0 < redis_client.pttl(alive) <= liveness.ALIVE_MS
        store.close()
        assert not redis_client.exists(alive) and not store.holder_alive(holder)
        time.sleep(liveness.BEAT_S + 0.3)
        assert not redis_client.exists(alive)  # no beat after close

    def test_a_game_lives_in_one_cluster_slot(self, store: RedisEventStore,
                                              redis_client: redis.Redis) -> None:
        store.create("g1", events(1, 1), {"a": "1"})
        store.append("g1", 1, events(2, 2), snapshot={"version": 2, "state": {}},
                     idempotency=(claim("h1"), "{}"))
        names = sorted(name.decode() for name in redis_client.keys("game:*"))  # not holder:*
        assert names == sorted([IDEM, "game:{g1}:events", "game:{g1}:meta", "game:{g1}:snap"])
        assert len({key_slot(name.encode()) for name in names}) == 1
        assert redis_client.type("game:{g1}:events") == b"stream"
        assert [entry_id for entry_id, _ in redis_client.xrange("game:{g1}:events")] == [
            b"1-0", b"2-0"]

    def test_an_ended_game_keeps_one_compact_string_in_place_of_its_stream(
            self, store: RedisEventStore, redis_client: redis.Redis) -> None:
        log = ended_log(chained=True)
        store.create("g1", log[:2], {"a": "1"})
        store.append("g1", 2, log[2:4], snapshot={"version": 4, "state": {}}, moved_in=True)
        follower = ThreadPoolExecutor(1).submit(store.wait_for_events, "g1", 4, 5000)
        time.sleep(0.2)  # the follower blocks on the stream, which the next append ends
        store.append("g1", 4, log[4:])
        assert follower.result() == log[4:]
        names = sorted(name.decode() for name in redis_client.keys("game:*"))
        assert names == ["game:{g1}:log", "game:{g1}:meta"]
        assert redis_client.ttl("game:{g1}:log") == -1
        assert not store.compact("g1")  # once is enough
        assert store.wait_for_events("g1", 3, 5000) == log[3:]  # within a slice of XREAD

    def test_a_compacted_game_no_client_moved_in_still_expires(
            self, brief: EventStore, redis_client: redis.Redis) -> None:
        """The compact log of a game whose keys still expire (no append was `moved_in`)
        takes the stream's time to live: nothing of the game outlives it."""
        brief.create("g1", events(1, 2), {})
        brief.append("g1", 2, [{**event(3), "type": ev.GAME_ENDED}])
        assert 0 < redis_client.pttl("game:{g1}:log") <= UNPLAYED_S * 1000

    def test_the_append_id_is_a_field_of_the_first_entry_appended(
            self, store: RedisEventStore, redis_client: redis.Redis) -> None:
        store.create("g1", events(1, 1), {})
        store.append("g1", 1, events(2, 3), append_id="a1")
        fields = [list(entry) for _, entry in redis_client.xrange("game:{g1}:events")]
        assert fields == [[b"e"], [b"e", b"a"], [b"e"]]
        assert redis_client.xrange("game:{g1}:events", "2-0", "2-0")[0][1][b"a"] == b"a1"

    def test_a_log_written_before_append_ids_reads_and_grows(
            self, store: RedisEventStore, redis_client: redis.Redis) -> None:
        for old in events(1, 3):  # entries with the event field 'e' only
            redis_client.xadd("game:{g1}:events", {"e": json.dumps(old)}, id=f"{old['seq']}-0")
        assert store.read("g1") == events(1, 3) and store.load("g1") == (None, events(1, 3))
        with pytest.raises(ConcurrencyError):
            store.append("g1", 2, events(3, 3), append_id="a1")
        store.append("g1", 3, events(4, 4), append_id="a1")
        store.append("g1", 3, events(4, 4), append_id="a1")
        assert store.read("g1") == events(1, 4)

    def test_wait_for_events_blocks_across_several_slices(self, store: RedisEventStore) -> None:
        store.create("g1", events(1, 1), {})
        writer = later(1.3, lambda: store.append("g1", 1, events(2, 2)))
        assert seqs(store.wait_for_events("g1", 1, 5000)) == [2]
        writer.join()

    def test_commands_at_once_get_connections_of_their_own_and_reuse_them_after(
            self, store: RedisEventStore) -> None:
        store.create("g1", events(1, 2), {})
        with store._redis() as first, store._redis() as second:  # e.g. two greenlets
            lent = {first.client_id(), second.client_id()}
        assert len(lent) == 2
        with store._redis() as again:
            assert again.client_id() in lent  # taken back, not a new connection
        assert store.version("g1") == 2
        child = os.fork()
        if child == 0:
            with store._redis() as own:
                os._exit(0 if store.version("g1") == 2 and own.client_id() not in lent else 1)
        assert os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 0
        with store._redis() as again:
            assert again.client_id() in lent

    def test_a_command_cut_short_drops_its_connection(self, store: RedisEventStore) -> None:
        store.create("g1", events(1, 2), {})
        with pytest.raises(KeyboardInterrupt), store._redis() as cut:
            before = cut.client_id()
            raise KeyboardInterrupt  # its reply could still be on the way
        with pytest.raises(redis.ResponseError), store._redis() as refused:
            assert refused.client_id() != before  # the same client, a new connection
            after = refused.client_id()
            refused.execute_command("NO-SUCH-COMMAND")
        with store._redis() as kept:
            assert kept.client_id() == after  # an error reply was read whole: kept
        assert store.version("g1") == 2

    def test_scripts_run_again_after_the_server_forgets_them(
            self, store: RedisEventStore, redis_client: redis.Redis) -> None:
        store.create("g1", events(1, 1), {})
        redis_client.script_flush()  # as after a restart: EVALSHA answers NOSCRIPT
        store.append("g1", 1, events(2, 2), snapshot={"version": 2, "state": {"a": 1}})
        assert store.load("g1") == ({"version": 2, "state": {"a": 1}}, [])
        assert seqs(store.read("g1")) == [1, 2]

    def test_a_connection_the_server_dropped_is_made_again_as_the_retry_policy_says(
            self, redis_client: redis.Redis, redis_url: str) -> None:
        store = RedisEventStore(redis.Redis.from_url(redis_url, retry=Retry(NoBackoff(), 1)))
        with store.client:
            store.create("g1", events(1, 2), {})
            with store._redis() as lent:
                drop = lambda: redis_client.client_kill_filter(_id=lent.client_id())  # noqa: E731
            assert drop() == 1
            assert seqs(store.read("g1", after=1)) == [2]  # a command, on a new connection
            assert drop() == 1
            assert seqs(store.load("g1")[1]) == [1, 2]  # a script, on a new connection

    def test_an_unreachable_server_raises_store_unavailable(self) -> None:
        store = RedisEventStore(redis.Redis.from_url(f"redis://127.0.0.1:{free_port()}/0",
                                                     retry=Retry(NoBackoff(), 0)))
        with store.client:
            assert store.ping() is False
            with pytest.raises(StoreUnavailable):
                store.version("g1")
            with pytest.raises(StoreUnavailable):
                store.append("g1", 1, events(2, 2))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """One local Redis Cluster for the module; each test flushes it."""
    with LocalCluster(tmp_path_factory.mktemp("contract-cluster")) as running:
        yield running


class TestRedisClusterStore(StoreContract):
    """The same contract over the local Redis Cluster (three masters), as
    `REDIS_URL=redis+cluster://...` runs the store."""

    @pytest.fixture
    def store(self, cluster: LocalCluster) -> Iterator[RedisEventStore]:
        """A store over a cluster client, every master flushed first."""
        for index in range(len(cluster.ports)):
            with cluster.node_client(index) as node:
                node.flushall()
        client = connect_store(cluster.url)
        with closing(RedisEventStore(client)) as store:
            yield store
        client.disconnect_connection_pools()  # close() leaves the nodes' pools connected
        client.close()


class TestRedisStoreOverResp3Decoded(StoreContract):
    """The same contract over a client speaking RESP3 and decoding responses to str."""

    @pytest.fixture
    def store(self, redis_client: redis.Redis, redis_url: str) -> Iterator[RedisEventStore]:
        """A store over its own client; asking for redis_client flushes the database."""
        with (redis.Redis.from_url(redis_url, protocol=3, decode_responses=True) as client,
              closing(RedisEventStore(client)) as store):
            yield store


def test_a_process_may_have_hundreds_of_commands_in_flight(redis_url: str) -> None:
    """A gevent API process serves up to 1000 connections, each open stream waiting on Redis
    with a connection of its own: more than redis-py's default pool of 100."""
    store = build(Settings(redis_url=redis_url)).store
    with contextlib.ExitStack() as held:
        lent = [held.enter_context(store._redis()) for _ in range(300)]
        assert len({client.client_id() for client in lent}) == 300
    assert store.version("nothing") == 0
