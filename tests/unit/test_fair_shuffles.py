"""Fair shuffles (API.md "Fair shuffles", R5, R25, R26): decks nobody can predict, a
commitment to each shown from the start, and an audit that holds every deck to it."""

from __future__ import annotations

import hashlib
import random
import re
import secrets
from typing import Any

import pytest

from service.adapters.settings import Settings
from service.game import events as ev
from service.game.audit import audit
from service.game.state import replay
from service.usecases import decks
from service.usecases.decks import Dealer
from service.usecases.games import Games
from tests.memory_store import InMemoryEventStore
from tests.unit.test_usecases import AT, HUMANS, RULES, FakeTurnQueue

SECRET = b"a deck secret"
HEX64 = re.compile(r"[0-9a-f]{64}")


def games_with(dealer: Dealer) -> Games:
    """The use cases over a fresh in-memory store, dealing with `dealer`."""
    return Games(InMemoryEventStore(), FakeTurnQueue(), lambda: AT, dealer=dealer)


def first_deal(games: Games, seed: int | None) -> tuple[str, dict[str, Any]]:
    """Create a two-human game; return its id and its first hand_started's data."""
    created = games.create(HUMANS, RULES, seed)
    return created.game_id, games.ctx.store.read(created.game_id)[1]["data"]


def finished(games: Games) -> str:
    """Play a two-human one-hand game to its end by first legal moves; return its id."""
    game_id = games.create(HUMANS, RULES, None).game_id
    while (seat := games.current_view(game_id, None).table.fields["turn"]) is not None:
        games.move(game_id, seat, games.current_view(game_id, seat).own["legal_moves"][0],
                   None, None)
    return game_id


def undrawn(log: list[ev.Event]) -> int:
    """How many tiles of the boneyard of a two-seat, one-hand log were never drawn."""
    return 66 - 2 * 14 - sum(1 for e in log if e["type"] == ev.TILE_DRAWN)


def rechain(log: list[ev.Event]) -> None:
    """Recompute the hash chain of an altered log, as a forger would."""
    prev = ev.GENESIS
    for event in log:
        event["hash"] = prev = ev.event_hash(prev, event)


def test_R5_without_a_seed_decks_come_from_the_csprng_and_differ(monkeypatch):
    used = []

    class Spy(secrets.SystemRandom):
        def shuffle(self, x: Any) -> None:  # type: ignore[override]
            used.append(len(x))
            super().shuffle(x)

    monkeypatch.setattr(decks.secrets, "SystemRandom", Spy)
    games = games_with(Dealer(seeded=True, secret=lambda: SECRET))
    random.seed(1)  # the module's generator plays no part
    first = first_deal(games, None)[1]
    random.seed(1)
    second = first_deal(games, None)[1]
    assert used == [66, 66]
    assert first["deck"] != second["deck"] and first["salt"] != second["salt"]


def test_with_the_setting_off_a_seed_is_ignored():
    games = games_with(Dealer(seeded=False, secret=lambda: SECRET))
    (one, first), (two, second) = first_deal(games, 42), first_deal(games, 42)
    assert first["deck"] != second["deck"]
    assert games.ctx.store.meta(one)["seed"] == games.ctx.store.meta(two)["seed"] == ""
    assert Dealer().kept_seed(42) is None and Dealer(seeded=True).kept_seed(42) == 42


def test_with_the_setting_on_a_seed_deals_alike_only_in_its_own_game():
    games = games_with(Dealer(seeded=True, secret=lambda: SECRET))
    (one, first), (two, second) = first_deal(games, 42), first_deal(games, 42)
    assert first["deck"] != second["deck"]  # the game id is mixed in
    assert games.ctx.store.meta(one)["seed"] == games.ctx.store.meta(two)["seed"] == "42"
    again = Dealer(seeded=True, secret=lambda: SECRET).shuffle(one, 42)(1)  # another process
    assert [t.text for t in again.deck] == first["deck"] and again.salt == first["salt"]
    other = Dealer(seeded=True, secret=lambda: b"another secret").shuffle(one, 42)(1)
    assert [t.text for t in other.deck] != first["deck"] and other.salt != first["salt"]


def test_R26_a_seeded_game_replays_to_the_same_state_and_deals_later_hands_alike():
    games = games_with(Dealer(seeded=True, secret=lambda: SECRET))
    created = games.create(HUMANS, {"hands": 2, "opening": "draw"}, 7)
    log = games.ctx.store.read(created.game_id)
    assert replay(log).to_dict() == created.state.to_dict()
    dealer = games.ctx.dealer.shuffle(created.game_id, 7)
    assert dealer(2) == dealer(2) and dealer(2) != dealer(1)


def test_every_hand_started_commits_to_its_deck_as_api_md_says():
    games = games_with(Dealer())
    data = first_deal(games, None)[1]
    assert HEX64.fullmatch(data["salt"]) and HEX64.fullmatch(data["commitment"])
    text = f"{data['salt']}:{','.join(data['deck'])}"
    assert data["commitment"] == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_R25_a_redacted_log_shows_the_commitment_but_neither_deck_nor_salt():
    games = games_with(Dealer())
    game_id, data = first_deal(games, None)
    for seat in (0, 1, None):
        started = games.events(game_id, seat, 0)[1]["data"]
        assert started["commitment"] == data["commitment"]
        assert "deck" not in started and "salt" not in started


def test_once_the_match_has_ended_the_log_shows_every_salt_and_the_audit_passes():
    games = games_with(Dealer())
    game_id = finished(games)
    for seat in (0, None):
        shown = games.events(game_id, seat, 0)
        assert shown == games.export(game_id)
        assert "salt" in shown[1]["data"] and "deck" in shown[1]["data"]
    assert audit(games.export(game_id)) is None


def test_the_audit_catches_a_deck_altered_where_only_its_commitment_shows_it():
    games = games_with(Dealer())
    logs = (games.export(finished(games)) for _ in range(50))
    log = next(log for log in logs if undrawn(log) >= 2)
    data = log[1]["data"]
    data["deck"][-2:] = data["deck"][:-3:-1]  # two tiles never drawn, swapped: every event
    # still follows from the deck, and the hash chain is made anew
    rechain(log)
    finding = audit(log)
    assert finding is not None and finding.seq == 2
    assert "do not match its commitment" in finding.reason
    data["deck"][-2:] = data["deck"][:-3:-1]
    rechain(log)
    assert audit(log) is None


@pytest.mark.parametrize(("raw", "value"), [
    ("1", True), ("true", True), ("TRUE", True), ("on", True), ("yes", True),
    ("0", False), ("false", False), ("False", False), ("off", False), ("no", False), ("", False),
])
def test_a_boolean_setting_reads_its_words_not_pythons_truth(raw, value):
    assert Settings.from_env({"SEEDED_GAMES": raw}).seeded_games is value
    assert Settings.from_env({"SPINNER_SEEDED_GAMES": raw}).seeded_games is value


def test_a_boolean_setting_that_is_no_boolean_is_refused():
    with pytest.raises(ValueError, match="not a boolean"):
        Settings.from_env({"SEEDED_GAMES": "maybe"})
    assert Settings.from_env({}).seeded_games is False
