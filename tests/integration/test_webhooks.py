"""Turn notifications (API.md "Lifecycle"): a real receiver on loopback, a real rq worker.

Every `turn` of a game arrives (at least once), signed as the `standardwebhooks` library
verifies; a failed try is retried under the same webhook-id; a receiver that never answers
slows no move; no body holds a tile; a URL that is http or private is refused at creation,
and one that resolves to a private address at delivery is not called."""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import random
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient
from prometheus_client import REGISTRY
from rq import Queue
from standardwebhooks.webhooks import Webhook

from service.adapters import webhook_delivery, webhooks
from service.adapters.bootstrap import build, connect
from service.adapters.outbox import DRAIN, OUTBOX, RETRIES, TRYING, Outbox
from service.adapters.settings import Settings
from service.adapters.turn_queue import RqTurnQueue
from service.adapters.webhooks import QUEUE_NAME
from service.api.app import create_app
from service.entrypoints import cli
from service.entrypoints.cli import WORKERS
from tests.api.contract import ContractClient
from tests.api.driver import auth
from tests.support.webhook_receiver import Receiver
from tests.workers import WorkerProcess, wait_until
from workers.runner import TurnWorker

TILE = re.compile(r"\b[0-9S]-[0-9S]\b")
BODY_KEYS = {"turn": {"type", "game_id", "version", "seat", "turn_deadline"},
             "hand_ended": {"type", "game_id", "version", "hand_number", "points"},
             "game_ended": {"type", "game_id", "version", "totals", "winners"}}
"""Every field a notification has: none names a tile, a hand or a deck (R25)."""


RETRY_S = "1,1,1"
"""Short retries (4 tries over about 3 s; the jobs get them when queued, by the API)."""


def client_of(redis_url: str, allow_private: bool, retry_s: str = RETRY_S) -> FlaskClient:
    """A test client of the real app (the creations' answers are checked against
    openapi.yaml; the moves' are elsewhere, and checking costs 0.3 s an answer)."""
    settings = Settings(redis_url=redis_url, ai_budget_s=0.02, seeded_games=True,
                        rate_limit_per_token=0, rate_limit_per_address=0,
                        webhooks_allow_private=allow_private, webhook_retry_s=retry_s)
    return create_app({"TESTING": True}, services=build(settings)).test_client()


@pytest.fixture
def client(redis_url: str, redis_client: Any) -> FlaskClient:
    """The app, with notify URLs on loopback allowed (as for local use)."""
    return client_of(redis_url, allow_private=True)


@pytest.fixture
def worker(redis_url: str, redis_client: Any) -> Iterator[WorkerProcess]:
    """One real worker that may call loopback."""
    process = WorkerProcess(redis_url, ai_budget_s="0.02", webhooks_allow_private="1")
    yield process
    process.stop()


def create(client: FlaskClient, url: str, ai: dict[int, str] | None = None,
           seed: int = 5) -> tuple[str, dict[int, str], str]:
    """Create a one-hand two-seat game notified at `url`; return its id, tokens and secret."""
    players = [{"name": f"P{s}", "kind": "ai", "level": (ai or {})[s]} if s in (ai or {})
               else {"name": f"P{s}", "kind": "human"} for s in range(2)]
    body = {"players": players, "rules": {"hands": 1}, "seed": seed, "notify": {"url": url}}
    answer = ContractClient(client).post("/v1/games", json=body)
    assert answer.status_code == 201, answer.json
    secret = answer.json["notify"]["secret"]
    assert answer.json["notify"]["url"] == url and secret.startswith("whsec_")
    tokens = {s["seat"]: s["token"] for s in answer.json["seats"] if "token" in s}
    return answer.json["game_id"], tokens, secret


def human_turns(client: FlaskClient, game_id: str, tokens: dict[int, str]) -> list[int]:
    """Play the human seats' first legal moves until the match ends (the AI's, if any, by
    the worker); return every version at which a human seat was to move."""
    versions, rng = [], random.Random(3)
    while True:
        assert wait_until(lambda: ready(client, game_id, tokens), 20)
        state = client.get(f"/v1/games/{game_id}").json
        if state["status"] != "playing":
            return versions
        seat = state["turn"]
        mine = client.get(f"/v1/games/{game_id}", headers=auth(tokens[seat])).json
        versions.append(mine["version"])
        moved = client.post(f"/v1/games/{game_id}/moves", json=rng.choice(mine["legal_moves"]),
                            headers={**auth(tokens[seat]), "If-Match": f'"{mine["version"]}"'})
        assert moved.status_code == 200, moved.json


def ready(client: FlaskClient, game_id: str, tokens: dict[int, str]) -> bool:
    """Whether the match has ended or a human seat is to move."""
    state = client.get(f"/v1/games/{game_id}").json
    return state["status"] != "playing" or state["turn"] in tokens


def assert_signed_and_tileless(receiver: Receiver, secret: str) -> None:
    """Every request verifies with the library and the game's secret, and names no tile."""
    for received in receiver.received:
        assert Webhook(secret).verify(received.body, received.headers) == received.json
        body = received.json
        assert set(body) == BODY_KEYS[body["type"]]
        assert not TILE.search(received.body), received.body


@pytest.mark.parametrize("ai", [{}, {1: "greedy"}], ids=["two-humans", "human-vs-ai"])
def test_every_turn_arrives_signed_and_without_a_tile(client, worker, ai):
    with Receiver() as receiver:
        game_id, tokens, secret = create(client, receiver.url(), ai)
        versions = human_turns(client, game_id, tokens)
        assert wait_until(lambda: receiver.bodies("game_ended"), 20)
        # at least once: a try that failed (a loaded machine) comes later, by its retry
        assert wait_until(lambda: {t["version"] for t in receiver.bodies("turn")} >= set(
            versions), 10)
        turns = receiver.bodies("turn")
        assert sorted({t["version"] for t in turns}) == versions  # all, and no other
        assert all(t["game_id"] == game_id and t["seat"] in tokens for t in turns)
        assert all(t["turn_deadline"] is None for t in turns)  # no clock in these rules
        ended, final = receiver.bodies("hand_ended"), receiver.bodies("game_ended")
        state = client.get(f"/v1/games/{game_id}").json
        assert [(e["hand_number"], e["points"]) for e in ended] == [
            (s["hand_number"], s["points"]) for s in state["scores"]]
        assert final == [{"type": "game_ended", "game_id": game_id, "version": state["version"],
                          "totals": [p["total"] for p in state["players"]],
                          "winners": state["winners"]}]
        assert_signed_and_tileless(receiver, secret)


def test_a_receiver_answering_500_twice_gets_it_three_times_under_one_id(
        client, worker, redis_client):
    with Receiver(statuses=[500, 500]) as receiver:
        game_id, _, secret = create(client, receiver.url())
        version = client.get(f"/v1/games/{game_id}").json["version"]
        webhook_id = f"msg_{game_id}_{version}_turn"
        assert wait_until(lambda: retrying(redis_client) == [webhook_id], 10)  # failed once
        assert secret.encode() not in redis_client.zrange(RETRIES, 0, -1)[0]  # in the meta
        assert wait_until(lambda: len(receiver.received) == 3, 20)
        assert wait_until(lambda: not redis_client.exists(OUTBOX, TRYING, RETRIES), 5)
        time.sleep(1.5)  # a retry's delay: none comes, a delivered notification is done
        tries = receiver.received
        assert len(tries) == 3
        assert {t.headers["webhook-id"] for t in tries} == {webhook_id}
        assert len({t.body for t in tries}) == 1
        assert_signed_and_tileless(receiver, secret)


def retrying(redis_client: Any) -> list[str]:
    """The webhook-ids of the notifications waiting for a retry, the soonest first."""
    return [json.loads(entry)[1] for entry in redis_client.zrange(RETRIES, 0, -1)]


def test_a_redirect_is_a_failed_try_not_followed_and_counted(redis_url, redis_client, caplog):
    notifier, client = notifier_and_client(redis_url)
    before = tries("rejected")
    caplog.set_level(logging.INFO, logger="spinner.webhooks")
    with Receiver(statuses=[302]) as receiver:
        game_id = create(client, receiver.url())[0]
        assert notifier.drain() == 1
        assert len(receiver.received) == 1
    assert tries("rejected") == before + 1
    assert [f"msg_{game_id}_" in w for w in retrying(redis_client)] == [True]
    assert "answered 302; retrying in 1 s" in caplog.text


def test_a_try_without_an_answer_in_time_fails_and_is_counted(
        redis_url, redis_client, monkeypatch):
    monkeypatch.setattr(webhook_delivery, "TIMEOUT_S", 0.3)  # 5 s in service
    notifier, client = notifier_and_client(redis_url)
    before = tries("no_answer")
    with Receiver(hang=True) as receiver:
        create(client, receiver.url())
        started = time.monotonic()
        assert notifier.drain() == 1
        assert time.monotonic() - started < 3  # the answer's deadline, not the receiver's
        assert len(receiver.received) == 1
    assert tries("no_answer") == before + 1
    assert len(retrying(redis_client)) == 1


def test_a_notification_is_given_up_after_its_last_retry_and_counted(
        redis_url, redis_client, monkeypatch):
    notifier, client = notifier_and_client(redis_url, retry_s="0")  # two tries, at once
    given_up = tries("given_up")
    with Receiver(statuses=[500, 500, 500]) as receiver:
        create(client, receiver.url())
        assert notifier.drain() == 2  # the first try, then its retry due at once
        assert len(receiver.received) == 2
    assert tries("given_up") == given_up + 1
    assert not redis_client.exists(OUTBOX, TRYING, RETRIES, DRAIN)


def tries(outcome: str) -> float:
    """The count of tries of that outcome in this process."""
    return REGISTRY.get_sample_value("spinner_webhook_deliveries_total",
                                     {"outcome": outcome}) or 0.0


def test_a_receiver_that_never_answers_slows_no_move(client, worker):
    with Receiver(hang=True) as receiver:
        game_id, tokens, _ = create(client, receiver.url(), seed=9)
        assert wait_until(lambda: receiver.received, 10)  # a try is hanging from now on
        slowest = 0.0
        for _ in range(12):
            state = client.get(f"/v1/games/{game_id}").json
            seat = state["turn"]
            mine = client.get(f"/v1/games/{game_id}", headers=auth(tokens[seat])).json
            started = time.monotonic()
            moved = client.post(f"/v1/games/{game_id}/moves", json=mine["legal_moves"][0],
                                headers=auth(tokens[seat]))
            slowest = max(slowest, time.monotonic() - started)
            assert moved.status_code == 200
        # generous: a move that waited on a try would wait for its 5 s timeout
        assert slowest < 4.0
        assert receiver.received and not receiver.released.is_set()  # tries held meanwhile


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/x", "https://127.0.0.1/x",
                                 "https://localhost/x", "https://10.1.2.3/x",
                                 "https://[::ffff:192.168.0.1]/x", "https://169.254.169.254/",
                                 "https://[2002:7f00:1::]/x",  # 6to4, carrying 127.0.0.1
                                 "ftp://example.com/x",
                                 # public, but no request line can carry them as they are
                                 "https://1.1.1.1/a b", "https://1.1.1.1/a\r\nX-Injected: 1",
                                 "https://1.1.1.1/a\u0000b", "https://1.1.1.1/\u00e9",
                                 "https://1.1.1.1:0/",
                                 # brackets that make no IPv6 host (these were a 500)
                                 "https://[::1/x", "https://example.com]/x", "https://]/x",
                                 "https://[2606:4700::1111]x/"])
def test_an_http_or_private_url_is_refused_at_creation(redis_url, redis_client, url):
    refused = ContractClient(client_of(redis_url, allow_private=False)).post("/v1/games", json={
        "players": [{"name": "A", "kind": "human"}, {"name": "B", "kind": "human"}],
        "notify": {"url": url}})
    assert refused.status_code == 400
    assert [e["field"] for e in refused.json["errors"]] == ["notify.url"]
    assert redis_client.keys("game:*") == []  # no game was made


def test_a_url_resolving_to_a_private_address_at_delivery_is_not_called(redis_url, redis_client):
    strict = WorkerProcess(redis_url, ai_sweep_every_s="0.5")  # WEBHOOKS_ALLOW_PRIVATE off
    try:
        with Receiver() as receiver:  # the API allows it (two tries), the worker does not
            create(client_of(redis_url, allow_private=True, retry_s="1"), receiver.url("localhost"))
            assert wait_until(lambda: redis_client.exists(RETRIES), 10)  # its first try
            assert wait_until(lambda: not redis_client.exists(OUTBOX, TRYING, RETRIES), 10)
            assert receiver.received == []  # both tries refused to call, then given up
    finally:
        strict.stop()


def test_a_drain_whose_every_url_is_refused_now_puts_them_among_the_retries(
        redis_url, redis_client):
    """A batch with no receiver to call (each URL refused, or its game gone) is tried, not a
    drain that fails and leaves it to stall the next drains."""
    strict = build(Settings(redis_url=redis_url)).notifier  # WEBHOOKS_ALLOW_PRIVATE off
    with Receiver() as receiver:
        game_id = create(client_of(redis_url, allow_private=True), receiver.url())[0]
        assert strict.drain() == 1 and receiver.received == []
    assert [f"msg_{game_id}_" in w for w in retrying(redis_client)] == [True]
    assert not redis_client.exists(OUTBOX, TRYING, DRAIN)


# The outbox: first tries in batches, by one drain at a time ---------------------------

def notifier_and_client(redis_url: str, retry_s: str = RETRY_S) -> tuple[Any, FlaskClient]:
    """The services' notifier (no worker runs here) and a client of the app over them."""
    services = build(Settings(redis_url=redis_url, webhooks_allow_private=True,
                              webhook_retry_s=retry_s))
    return services.notifier, create_app({"TESTING": True}, services=services).test_client()


def test_notifications_wait_in_the_outbox_behind_one_drain_job(redis_url, redis_client):
    notifier, client = notifier_and_client(redis_url)
    with Receiver() as receiver:
        games = [create(client, receiver.url(), seed=seed)[0] for seed in (1, 2, 3)]
        assert redis_client.llen(OUTBOX) == 3  # one turn each, not yet tried
        assert [job.func_name for job in notifier.queue.jobs] == [
            "workers.jobs.drain_notifications"]  # queued by the first push only
        assert notifier.drain() == 3  # one job tries them all, in order
        assert [body["game_id"] for body in receiver.bodies("turn")] == games
    assert redis_client.llen(OUTBOX) == 0 and not redis_client.exists(DRAIN, TRYING)


def test_a_drain_keeps_one_connection_open_to_a_receiver(redis_url, redis_client):
    notifier, client = notifier_and_client(redis_url)
    with Receiver(keep_alive=True) as receiver:
        for seed in (1, 2, 3):
            create(client, receiver.url(), seed=seed)
        assert notifier.drain() == 3
        assert len({received.port for received in receiver.received}) == 1


def test_a_batch_left_by_a_drain_killed_mid_batch_is_tried_by_the_next(
        redis_url, redis_client):
    notifier, client = notifier_and_client(redis_url)
    with Receiver() as receiver:
        games = [create(client, receiver.url(), seed=seed)[0] for seed in (1, 2)]
        token = notifier.outbox.claim()
        assert len(notifier.outbox.take(token, 100)) == 2  # then the drain dies
        assert notifier.drain() == 0  # the lease still holds: nobody else tries them
        assert receiver.received == [] and redis_client.hlen(TRYING) == 2
        redis_client.delete(DRAIN)  # its lease runs out
        assert notifier.drain() == 2
        assert [body["game_id"] for body in receiver.bodies("turn")] == games
    assert not redis_client.exists(OUTBOX, TRYING, DRAIN)


def test_a_notification_whose_drain_was_lost_is_queued_again_by_a_workers_sweep(
        redis_url, redis_client):
    _, client = notifier_and_client(redis_url)
    with Receiver() as receiver:
        game_id = create(client, receiver.url())[0]
        Queue(QUEUE_NAME, connection=redis_client).empty()  # its drain job was lost
        redis_client.delete(DRAIN)  # and the mark of its drain ran out
        sweeping = WorkerProcess(redis_url, ai_sweep_every_s="0.5", webhooks_allow_private="1")
        try:
            assert wait_until(lambda: receiver.bodies("turn"), 10)
        finally:
            sweeping.stop()
        assert receiver.bodies("turn")[0]["game_id"] == game_id


def test_a_drain_past_its_time_hands_the_rest_to_a_fresh_drain_job(
        redis_url, redis_client, monkeypatch):
    monkeypatch.setattr(webhooks, "DRAIN_S", 0.0)  # 1 s in service
    monkeypatch.setattr(webhooks, "BATCH", 1)
    monkeypatch.setattr(webhooks, "MOST_IN_FLIGHT", 1)  # none taken while one is tried
    notifier, client = notifier_and_client(redis_url)
    with Receiver() as receiver:
        for seed in (1, 2):
            create(client, receiver.url(), seed=seed)
        notifier.queue.empty()
        assert notifier.drain() == 1  # one batch, then its time was up, its lanes idle
        assert len(receiver.received) == 1 and redis_client.llen(OUTBOX) == 1
        assert [job.func_name for job in notifier.queue.jobs] == [
            "workers.jobs.drain_notifications"]
        assert redis_client.get(DRAIN) == b"queued"  # for that job to claim
        assert notifier.drain() == 1 and len(receiver.received) == 2


def test_a_receiver_without_an_answer_is_sent_each_notification_all_at_once(
        redis_url, redis_client, monkeypatch):
    """API.md counts tries: after one try got no answer, each of the receiver's other
    notifications is still sent, each on a connection of its own, all at once (one timeout
    for them together, not one each); a receiver that answers gets its own meanwhile."""
    monkeypatch.setattr(webhook_delivery, "TIMEOUT_S", 1.0)  # 5 s in service
    notifier, client = notifier_and_client(redis_url)
    deferred, unanswered = tries("deferred"), tries("no_answer")
    with Receiver(hang=True) as hanging, Receiver() as answering:
        for seed in range(1, 7):
            create(client, hanging.url(), seed=seed)
        answered = create(client, answering.url(), seed=9)[0]
        assert notifier.drain() == 7
        sent = [r.headers["webhook-id"] for r in hanging.received]
        after_the_first = [r.at for r in hanging.received[1:]]
        assert len(set(sent)) == 6  # each of them once
        assert max(after_the_first) - min(after_the_first) < webhook_delivery.TIMEOUT_S
        assert [body["game_id"] for body in answering.bodies("turn")] == [answered]
    assert tries("no_answer") == unanswered + 6 and tries("deferred") == deferred
    assert sorted(retrying(redis_client)) == sorted(sent)  # each waits for its retry


def test_only_a_drain_with_a_receiver_without_an_answer_starts_the_lone_tries_loop(
        redis_url, redis_client, monkeypatch):
    """The lone tries' event loop, a thread, is started by the first of them, not by every
    drain: a drain whose receivers all answer starts none."""
    monkeypatch.setattr(webhook_delivery, "TIMEOUT_S", 0.5)  # 5 s in service
    started: list[webhook_delivery.Loop] = []

    class Counted(webhook_delivery.Loop):
        def __init__(self) -> None:
            started.append(self)
            super().__init__()

    monkeypatch.setattr(webhook_delivery, "Loop", Counted)
    notifier, client = notifier_and_client(redis_url)
    with Receiver() as answering:
        create(client, answering.url(), seed=1)
        assert notifier.drain() == 1
        assert len(answering.bodies("turn")) == 1
    assert started == []
    with Receiver(hang=True) as hanging:
        for seed in (2, 3):
            create(client, hanging.url(), seed=seed)
        assert notifier.drain() == 2
        assert len(hanging.received) == 2  # the second alone, after the first got no answer
    assert len(started) == 1


def test_each_notification_to_a_receiver_that_never_answers_is_sent_at_each_try(
        redis_url, redis_client, monkeypatch):
    """A try is a request sent (API.md: at least 5 tries): with three tries here, each of
    four notifications to a receiver that never answers arrives three times under its
    webhook-id, and is then given up."""
    monkeypatch.setattr(webhook_delivery, "TIMEOUT_S", 0.5)  # 5 s in service
    notifier, client = notifier_and_client(redis_url, retry_s="1,1")
    with Receiver(hang=True) as hanging:
        for seed in range(4):
            create(client, hanging.url(), seed=seed)
        assert notifier.drain() == 4
        for _ in range(2):
            time.sleep(1.2)  # the retries are due
            assert notifier.drain() == 4
        counts = collections.Counter(r.headers["webhook-id"] for r in hanging.received)
    assert len(counts) == 4 and set(counts.values()) == {3}
    assert not redis_client.exists(OUTBOX, TRYING, RETRIES)


@pytest.mark.parametrize(("age_s", "tries_left"), [(0, [1, 1, 1]), (60, [1, 1])],
                         ids=["new", "older-than-its-delays"])
def test_a_notification_not_tried_now_keeps_its_tries_unless_it_is_old(
        redis_url, redis_client, monkeypatch, age_s, tries_left):
    """Beyond SILENT_AT_ONCE tries at once to receivers without an answer (or LANE_MOST
    waiting for one), a notification is not tried now: it goes back among the retries with
    its tries as they were; unless it is older than its delays together (here 3 s), when it
    counts as tried, so that none waits without end."""
    monkeypatch.setattr(webhook_delivery, "TIMEOUT_S", 0.5)  # 5 s in service
    monkeypatch.setattr(webhook_delivery, "SILENT_AT_ONCE", 2)
    notifier, client = notifier_and_client(redis_url)  # three retries: [1, 1, 1]
    deferred = tries("deferred")
    with Receiver(hang=True) as hanging:
        for seed in range(5):
            create(client, hanging.url(), seed=seed)
        for index in range(5):
            entry = json.loads(redis_client.lindex(OUTBOX, index))
            redis_client.lset(OUTBOX, index, json.dumps([*entry[:3], entry[3] - age_s, entry[4]]))
        assert notifier.drain() == 5
        sent = {r.headers["webhook-id"] for r in hanging.received}
    left = {json.loads(e)[1]: json.loads(e)[4] for e in redis_client.zrange(RETRIES, 0, -1)}
    assert len(sent) == 3 and len(left) == 5  # the first, then two at once; two not now
    assert all(left[webhook_id] == [1, 1] for webhook_id in sent)
    assert all(left[webhook_id] == tries_left for webhook_id in set(left) - sent)
    assert tries("deferred") == deferred + 2


def test_receivers_that_never_answer_hold_a_drain_up_for_one_timeout_together(
        redis_url, redis_client, monkeypatch):
    """A drain tries its receivers at once: eight that never answer are all tried before
    the first of their tries has timed out (one after another, each would come a timeout
    after the one before), and one that answers gets its notification in the same drain."""
    monkeypatch.setattr(webhook_delivery, "TIMEOUT_S", 2.0)  # 5 s in service
    notifier, client = notifier_and_client(redis_url)
    with contextlib.ExitStack() as receivers:
        hanging = [receivers.enter_context(Receiver(hang=True)) for _ in range(8)]
        answering = receivers.enter_context(Receiver())
        for seed, receiver in enumerate([*hanging, answering]):
            create(client, receiver.url(), seed=seed)
        assert notifier.drain() == 9
        arrivals = [receiver.received[0].at for receiver in hanging]
        assert max(arrivals) - min(arrivals) < webhook_delivery.TIMEOUT_S
        assert len(answering.bodies("turn")) == 1


def test_retries_to_receivers_that_never_answer_are_tried_together_with_a_first_try(
        redis_url, redis_client, monkeypatch):
    """Each notification's retry is not a job of its own, tried one after another (eight
    receivers that never answer would hold the worker up for eight timeouts, and every
    game's first tries behind them): a drain takes the retries due with the first tries and
    tries their receivers at once."""
    monkeypatch.setattr(webhook_delivery, "TIMEOUT_S", 1.0)  # 5 s in service
    notifier, client = notifier_and_client(redis_url, retry_s="1,1")  # three tries
    with contextlib.ExitStack() as receivers:
        hanging = [receivers.enter_context(Receiver(hang=True)) for _ in range(8)]
        for seed, receiver in enumerate(hanging):
            create(client, receiver.url(), seed=seed)
        assert notifier.drain() == 8 and len(retrying(redis_client)) == 8
        answering = receivers.enter_context(Receiver())
        create(client, answering.url(), seed=8)
        time.sleep(1.0)  # the retries are due
        assert notifier.drain() == 1 + 8
        assert len(answering.bodies("turn")) == 1
        assert [len(receiver.received) for receiver in hanging] == [2] * 8
        arrivals = [receiver.received[1].at for receiver in hanging]
        assert max(arrivals) - min(arrivals) < webhook_delivery.TIMEOUT_S  # all at once
        time.sleep(1.0)
        assert notifier.drain() == 8
        assert [len(receiver.received) for receiver in hanging] == [3] * 8
    assert not redis_client.exists(OUTBOX, TRYING, RETRIES)  # all given up, after 3 tries


def test_a_receiver_slow_to_answer_holds_up_only_its_own_notifications(
        redis_url, redis_client, monkeypatch):
    """Each receiver has a lane of its own: while one is slow to answer (here it never
    does), the drain goes on taking and trying the others' notifications."""
    monkeypatch.setattr(webhook_delivery, "TIMEOUT_S", 3.0)  # 5 s in service
    notifier, client = notifier_and_client(redis_url)
    with Receiver(hang=True) as slow, Receiver() as quick:
        create(client, slow.url(), seed=1)
        draining = threading.Thread(target=notifier.drain)
        draining.start()
        assert wait_until(lambda: slow.received, 5)  # its try hangs from now on
        made = time.monotonic()
        create(client, quick.url(), seed=2)
        assert wait_until(lambda: quick.received, 5)
        assert quick.received[0].at - made < webhook_delivery.TIMEOUT_S / 2  # not after it
        assert slow.received and not slow.released.is_set()
        draining.join()
    assert len(retrying(redis_client)) == 1  # the slow one's, which got no answer in time


def test_a_receiver_without_an_answer_that_answers_again_gets_its_kept_connection_back(
        redis_url, redis_client, monkeypatch):
    """A drain lasts as long as its lanes are busy: after a receiver gave no answer, each of
    its notifications is still sent (alone); once one is answered, the next go together on
    one kept connection again."""
    monkeypatch.setattr(webhook_delivery, "TIMEOUT_S", 0.5)  # 5 s in service
    notifier, client = notifier_and_client(redis_url)
    games = []
    with Receiver(hang=True, keep_alive=True) as receiver:
        for seed in range(5):
            create(client, receiver.url(), seed=seed)
            games.append(json.loads(redis_client.lpop(OUTBOX)))
        failed: list[str] = []
        with webhook_delivery.Delivery(notifier.store, True, lambda tried, why: failed.extend(
                n[1] for n, _ in why)) as delivery:
            for part in ([games[0]], [games[1]], "release", [games[2]], games[3:]):
                if part == "release":
                    receiver.release()  # it answers again
                    continue
                delivery.submit(part)
                assert wait_until(lambda: not delivery.in_flight, 5)
        ports = [r.port for r in receiver.received]
        assert [r.headers["webhook-id"] for r in receiver.received] == [g[1] for g in games]
    assert failed == [games[0][1], games[1][1]]  # the second sent, not skipped
    assert ports[3] == ports[4] and len(set(ports[:4])) == 4


def test_a_notification_is_signed_as_it_is_sent_not_as_it_waits_in_its_lane(
        redis_url, redis_client):
    """A receiver's notifications wait in its lane behind one slow to be answered: each is
    signed as it is sent, so its `webhook-timestamp` is the send's, not minutes old (which a
    receiver checking the timestamp's tolerance would refuse)."""
    notifier, client = notifier_and_client(redis_url)
    with Receiver(hang=True) as receiver:
        for seed in (1, 2):
            create(client, receiver.url(), seed=seed)
        threading.Timer(3.0, receiver.release).start()  # the first answered after 3 s
        assert notifier.drain() == 2
    first, second = (int(r.headers["webhook-timestamp"]) for r in receiver.received)
    assert second - first >= 2  # signed as it went, once the first was answered


def test_retries_wait_for_their_time_and_come_after_the_first_tries(redis_url, redis_client):
    outbox = Outbox(redis_client)
    first, second, due, later = (json.dumps(["g", name, "{}", 0, []]) for name in (
        "first", "second", "retry due", "retry later"))
    for entry in (first, second):
        outbox.push(entry)
    token = outbox.claim()
    assert outbox.take(token, 1) == [first.encode()]
    assert outbox.settle(token, ["first"], [(time.time() - 1, due), (time.time() + 60, later)])
    assert outbox.take(token, 2) == [second.encode(), due.encode()]  # the outbox's first
    assert redis_client.hkeys(TRYING) == [b"second", b"retry due"]
    assert outbox.settle(token, ["second", "retry due"], [])
    assert outbox.take(token, 2) == [] and outbox.release(token)  # nothing due: it ends
    assert redis_client.zrange(RETRIES, 0, -1) == [later.encode()]
    assert not outbox.sweep()  # nothing due: no drain to queue
    redis_client.zadd(RETRIES, {later: 0})  # its time comes
    assert outbox.sweep() and redis_client.get(DRAIN) == b"queued"


def test_spinner_serves_ai_workers_take_no_notifications_and_its_notifier_only_them(
        redis_url, redis_client, monkeypatch):
    """A delivery can wait seconds on a receiver: no AI turn, nor a turn clock, waits
    behind one in `spinner serve`, whose workers (`cli.WORKERS`, each a `spinner worker`
    command line) take AI turns or notifications, not both; a lone `spinner worker` takes
    both, AI turns first."""
    turns = RqTurnQueue(connect(redis_url), Settings(redis_url=redis_url))
    taken: dict[str, list[str]] = {}

    def worker_of(name: str) -> Any:
        def work(settings: Settings, lanes: Any, notifications: bool = True) -> None:
            taken[name] = TurnWorker(turns, 1.0, lanes, notifications=notifications
                                     ).queue_names()
        return work

    for name, flag in {**WORKERS, "lone": None}.items():
        monkeypatch.setattr("workers.runner.work", worker_of(name))
        assert cli.main(["worker", *([flag] if flag else [])]) == 0
    assert taken == {"worker": ["ai-turns", "ai-turns-expert"], "fast worker": ["ai-turns"],
                     "notifier": [QUEUE_NAME],
                     "lone": ["ai-turns", "ai-turns-expert", QUEUE_NAME]}


def test_a_creations_notification_enters_the_outbox_in_its_own_script(
        redis_url, redis_client, monkeypatch):
    """Nothing is pushed after the creation (a process dying between the two would lose it):
    its script pushed the turn and marked the drain; a game with no URL pushes nothing."""
    notifier, client = notifier_and_client(redis_url)
    sent: list[str] = []
    monkeypatch.setattr(notifier, "send", lambda *args: sent.append(args[1]))
    with Receiver() as receiver:
        game_id, _, _ = create(client, receiver.url())
        created = client.get(f"/v1/games/{game_id}").json
        entries = [json.loads(entry) for entry in redis_client.lrange(OUTBOX, 0, -1)]
        assert [(e[0], e[1]) for e in entries] == [
            (game_id, f"msg_{game_id}_{created['version']}_turn")]
        assert redis_client.get(DRAIN) == b"queued"  # marked by the creation's own script
        assert [job.func_name for job in notifier.queue.jobs] == [
            "workers.jobs.drain_notifications"]
        assert sent == []
        plain = {"players": [{"name": "A", "kind": "human"}, {"name": "B", "kind": "human"}]}
        assert client.post("/v1/games", json=plain).status_code == 201
        assert redis_client.llen(OUTBOX) == 1
        assert notifier.drain() == 1 and [b["game_id"] for b in receiver.bodies("turn")] == [
            game_id]


def test_a_moves_notification_enters_the_outbox_in_its_own_append(
        redis_url, redis_client, monkeypatch):
    notifier, client = notifier_and_client(redis_url)
    with Receiver() as receiver:
        game_id, tokens, _ = create(client, receiver.url())
        assert notifier.drain() == 1  # the creation's turn
    notifier.queue.empty()
    sent: list[str] = []
    monkeypatch.setattr(notifier, "send", lambda *args: sent.append(args[1]))
    state = client.get(f"/v1/games/{game_id}").json
    mine = client.get(f"/v1/games/{game_id}", headers=auth(tokens[state["turn"]])).json
    move = {"json": mine["legal_moves"][0], "headers": {**auth(tokens[state["turn"]]),
                                                        "If-Match": f'"{mine["version"]}"'}}
    assert client.post(f"/v1/games/{game_id}/moves", **move).status_code == 200
    after = client.get(f"/v1/games/{game_id}").json
    entries = [json.loads(entry) for entry in redis_client.lrange(OUTBOX, 0, -1)]
    assert [(e[0], json.loads(e[2])["version"]) for e in entries] == [(game_id, after["version"])]
    assert redis_client.get(DRAIN) == b"queued"  # marked by the append's own script
    assert [job.func_name for job in notifier.queue.jobs] == ["workers.jobs.drain_notifications"]
    assert client.post(f"/v1/games/{game_id}/moves", **move).status_code == 412
    assert redis_client.llen(OUTBOX) == 1  # a refused append adds nothing
    assert sent == []  # no push after the append: it was in it
