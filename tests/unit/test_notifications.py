"""Turn notifications over the in-memory store (API.md "Lifecycle"): which bodies each append
queues, that they name no tile, that queueing never fails an append; and the adapter's pure
parts: URL and address checks, the retry schedule, the signature."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook

from service.adapters.settings import Settings
from service.adapters.webhook_delivery import signed_headers
from service.adapters.webhook_targets import Refused, public, resolve
from service.adapters.webhooks import retry_delays
from service.usecases import errors
from service.usecases.decks import Dealer
from service.usecases.games import Games
from service.usecases.ports import NoNotifier, StoreUnavailable
from tests.memory_store import InMemoryEventStore
from tests.unit.test_clocks import CLOCK, HUMANS, LATER, Clock, ClockQueue
from tests.unit.test_usecases import AT, SECRET, FakeTurnQueue, first_legal

URL = "https://hooks.example.test/spinner"
HUMAN_AND_AI = [{"name": "Ann", "kind": "human"}, {"name": "Bot", "kind": "ai", "level": "random"}]
ONE_HAND = {"hands": 1, "opening": "draw"}
TILE = re.compile(r"\b[0-9S]-[0-9S]\b")


class RecordingNotifier(NoNotifier):
    """A Notifier that records each notification sent (none goes in the store's outbox);
    `refused` URLs it refuses."""

    def __init__(self, refused: str | None = None, fails: bool = False) -> None:
        self.sent: list[tuple[str, str, dict[str, Any]]] = []
        self.refused, self.fails = refused, fails

    def refusal(self, url: str) -> str | None:
        """Refuse the URL named at construction."""
        return "it is not public" if url == self.refused else None

    def send(self, game_id: str, webhook_id: str, body: dict[str, Any]) -> None:
        """Record the notification (or fail, as a queue whose Redis is down)."""
        if self.fails:
            raise StoreUnavailable("redis: ConnectionError")
        self.sent.append((game_id, webhook_id, body))


def games_with(notifier: RecordingNotifier) -> Games:
    """The use cases over an in-memory store, notifying through `notifier`."""
    return Games(InMemoryEventStore(), FakeTurnQueue(), lambda: AT,
                 dealer=Dealer(seeded=True, secret=lambda: SECRET), notifier=notifier)


def play_out(games: Games, game_id: str) -> list[int]:
    """Play the human's (seat 0) and the AI's first legal moves to the match's end; return
    the versions at which the human was to move."""
    versions = []
    while (shown := games.current_view(game_id, 0)).table.fields["status"] == "playing":
        version, turn = shown.table.version, shown.table.fields["turn"]
        if turn == 0:
            versions.append(version)
            games.move(game_id, 0, shown.own["legal_moves"][0], None, None)
        else:
            assert games.ai_turn(game_id, version, first_legal)
    return versions


def test_every_append_queues_its_notifications_in_order_and_none_names_a_tile() -> None:
    notifier = RecordingNotifier()
    games = games_with(notifier)
    created = games.create(HUMAN_AND_AI, {"hands": 2, "opening": "draw"}, 4, notify={"url": URL})
    versions = play_out(games, created.game_id)
    bodies = [body for _, _, body in notifier.sent]
    assert [b["version"] for b in bodies if b["type"] == "turn"] == versions
    assert [b["hand_number"] for b in bodies if b["type"] == "hand_ended"] == [1, 2]
    assert bodies[-1]["type"] == "game_ended"
    assert [b["version"] for b in bodies] == sorted(b["version"] for b in bodies)
    final = games.current_view(created.game_id, None).table.fields
    assert bodies[-1] == {"type": "game_ended", "game_id": created.game_id,
                          "version": final["version"], "winners": final["winners"],
                          "totals": [p["total"] for p in final["players"]]}
    assert [(b["hand_number"], b["points"]) for b in bodies if b["type"] == "hand_ended"] == [
        (s["hand_number"], s["points"]) for s in final["scores"]]
    assert not any(TILE.search(str(body)) for body in bodies)  # R25: no tile, no hand
    ids = [webhook_id for _, webhook_id, _ in notifier.sent]
    assert len(set(ids)) == len(ids)


def test_the_secret_is_shown_once_and_kept_only_in_the_games_meta() -> None:
    games = games_with(RecordingNotifier())
    created = games.create(HUMAN_AND_AI, ONE_HAND, 4, notify={"url": URL})
    assert created.notify is not None and created.notify["url"] == URL
    secret = created.notify["secret"]
    assert re.fullmatch(r"whsec_[A-Za-z0-9+/]{43}=", secret)
    assert games.ctx.store.meta(created.game_id)["notify_secret"] == secret
    for seat in (0, None):
        assert secret not in str(games.current_view(created.game_id, seat))
    assert secret not in str(games.events(created.game_id, None, 0))


def test_a_game_without_notify_queues_no_notification() -> None:
    notifier = RecordingNotifier()
    games = games_with(notifier)
    created = games.create(HUMAN_AND_AI, ONE_HAND, 4)
    play_out(games, created.game_id)
    assert created.notify is None and notifier.sent == []


def test_a_refused_url_refuses_the_creation_naming_notify_url() -> None:
    games = games_with(RecordingNotifier(refused=URL))
    with pytest.raises(errors.RefusedNotifyUrl) as refused:
        games.create(HUMAN_AND_AI, ONE_HAND, 4, notify={"url": URL})
    assert refused.value.extra["errors"] == [{"field": "notify.url",
                                              "message": "it is not public"}]
    assert isinstance(refused.value, errors.InvalidRequest)  # a 400


def test_a_notification_that_cannot_be_queued_fails_no_append() -> None:
    games = games_with(RecordingNotifier(fails=True))
    created = games.create(HUMAN_AND_AI, ONE_HAND, 4, notify={"url": URL})
    assert play_out(games, created.game_id)  # every move landed all the same


# The adapter's pure parts ---------------------------------------------------

@pytest.mark.parametrize("address", [
    "127.0.0.1", "10.1.2.3", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1",
    "0.0.0.0", "224.0.0.1", "240.0.0.1", "255.255.255.255", "::1", "::", "fe80::1",
    "fe80::1%eth0", "fc00::1", "fec0::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1"])
def test_no_loopback_private_link_local_or_reserved_address_is_public(address: str) -> None:
    assert not public(address)


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700::1111",
                                     "::ffff:8.8.8.8"])
def test_a_public_unicast_address_is_public(address: str) -> None:
    assert public(address)


@pytest.mark.parametrize(("url", "why"), [
    ("http://8.8.8.8/x", "must be https"), ("ftp://8.8.8.8/", "must be https"),
    ("https://user:pw@8.8.8.8/", "no user"), ("https:///x", "name a host"),
    ("https://8.8.8.8:99999/", "port"), ("https://127.0.0.1/", "not a public address"),
    ("https://localhost/", "not a public address"), ("https://[::1]:8443/", "not a public")])
def test_a_url_is_refused_unless_https_to_a_public_address(url: str, why: str) -> None:
    with pytest.raises(Refused, match=why):
        resolve(url)


def test_the_setting_allows_http_and_loopback_and_targets_the_address_checked() -> None:
    target = resolve("http://localhost:8080/hook?game=1", allow_private=True)
    assert (target.scheme, target.host, target.port, target.path) == (
        "http", "localhost", 8080, "/hook?game=1")
    assert not public(target.address)  # what `localhost` resolved to, connected to as is


def test_the_default_schedule_tries_at_least_five_times_over_ten_minutes() -> None:
    delays = retry_delays(Settings().webhook_retry_s)
    assert len(delays) + 1 >= 5
    assert sum(delays) >= 600
    assert delays == sorted(delays)  # growing


def test_a_try_is_signed_as_the_standardwebhooks_library_verifies() -> None:
    secret, payload = "whsec_" + "A" * 43 + "=", '{"type":"turn"}'
    headers = signed_headers(secret, "msg_1", payload)
    assert headers["webhook-id"] == "msg_1"
    assert abs(int(headers["webhook-timestamp"]) - time.time()) < 5
    assert Webhook(secret).verify(payload, headers) == {"type": "turn"}
    with pytest.raises(Exception, match="signature"):
        Webhook(secret).verify(payload + " ", headers)


# With the lifecycle (turn clocks, leaving) ----------------------------------

def clocked_games(notifier: RecordingNotifier, clock: Clock) -> tuple[Games, str]:
    """The use cases notifying through `notifier`, and a two-human game under a 10 s clock
    notified at URL."""
    games = Games(InMemoryEventStore(), ClockQueue(), clock,
                  dealer=Dealer(seeded=True, secret=lambda: SECRET), notifier=notifier)
    return games, games.create(HUMANS, CLOCK, 7, notify={"url": URL}).game_id


def turns(notifier: RecordingNotifier) -> list[dict[str, Any]]:
    """The `turn` bodies sent so far."""
    return [body for _, _, body in notifier.sent if body["type"] == "turn"]


def test_a_turn_under_a_clock_names_the_deadline_the_state_shows() -> None:
    notifier = RecordingNotifier()
    games, game_id = clocked_games(notifier, Clock())
    table = games.current_view(game_id, None).table
    assert table.fields["turn_deadline"] == LATER
    assert turns(notifier) == [{"type": "turn", "game_id": game_id, "version": table.version,
                                "seat": table.fields["turn"], "turn_deadline": LATER}]


def test_a_clock_that_runs_out_notifies_the_next_seat_with_its_own_deadline() -> None:
    notifier, clock = RecordingNotifier(), Clock()
    games, game_id = clocked_games(notifier, clock)
    version = games.current_view(game_id, None).table.version
    clock.now = LATER
    assert games.run_out_clock(game_id, version, first_legal)
    table = games.current_view(game_id, None).table
    assert turns(notifier)[-1] == {"type": "turn", "game_id": game_id, "version": table.version,
                                   "seat": table.fields["turn"],
                                   "turn_deadline": "2024-05-01T12:00:20.000Z"}


def test_a_leave_notifies_the_human_seat_to_move_at_its_version() -> None:
    notifier = RecordingNotifier()
    games, game_id = clocked_games(notifier, Clock())
    table = games.current_view(game_id, None).table
    seat = table.fields["turn"]
    left = games.leave(game_id, 1 - seat, "greedy").table
    assert turns(notifier)[-1] == {"type": "turn", "game_id": game_id, "version": left.version,
                                   "seat": seat, "turn_deadline": LATER}
    assert left.version == table.version + 1
