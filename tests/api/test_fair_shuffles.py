"""Fair shuffles over HTTP (API.md "Fair shuffles"): the commitment is public from the start,
the deck and salt once the match has ended, `spinner verify` holds every deck to its
commitment, and seeded decks come from a secret every process shares."""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from service.adapters.bootstrap import build
from service.adapters.deck_secret import SECRET_KEY
from service.adapters.settings import Settings
from service.api.app import create_app
from service.entrypoints.cli import main as spinner
from service.game.events import GENESIS, event_hash
from service.usecases.decks import Dealer
from tests.api.driver import auth, create, play_to_end


def dealt(services: Any, game_id: str) -> dict[str, Any]:
    """The game's first hand_started's data, as stored."""
    return services.store.read(game_id)[1]["data"]


def test_the_commitment_is_shown_to_every_seat_and_spectator_the_deck_and_salt_are_not(client):
    game_id, tokens = create(client, seats=3)
    for headers in (auth(tokens[0]), auth(tokens[2]), {}):
        started = client.get(f"/v1/games/{game_id}/events", headers=headers).json["events"][1]
        assert started["type"] == "hand_started"
        assert len(started["data"]["commitment"]) == 64
        assert "deck" not in started["data"] and "salt" not in started["data"]


def test_once_the_match_has_ended_everyone_can_check_each_commitment(client, tmp_path, capsys):
    game_id, tokens = create(client, seats=2, hands=2)
    play_to_end(client, game_id, tokens, random.Random(3))
    export = client.get(f"/v1/games/{game_id}/export").json
    assert client.get(f"/v1/games/{game_id}/events").json["events"] == export["events"]
    started = [e["data"] for e in export["events"] if e["type"] == "hand_started"]
    assert len(started) == 2
    for data in started:  # API.md's formula, computed here on its own
        text = f"{data['salt']}:{','.join(data['deck'])}".encode()
        assert hashlib.sha256(text).hexdigest() == data["commitment"]
        assert len(bytes.fromhex(data["salt"])) == 32
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    assert spinner(["verify", str(path)]) == 0
    deck = started[1]["deck"]  # a forger deals hand 2 otherwise, and chains the log anew
    deck[0], deck[1] = deck[1], deck[0]
    prev = GENESIS
    for event in export["events"]:
        event["hash"] = prev = event_hash(prev, event)
    path.write_text(json.dumps(export))
    assert spinner(["verify", str(path)]) == 1
    assert "do not match its commitment" in capsys.readouterr().err


def test_seeded_decks_come_from_a_secret_kept_in_redis_and_shared_by_every_process(
        client, services, settings, redis_client):
    (one, _), (two, _) = create(client, seed=42), create(client, seed=42)
    first, second = dealt(services, one), dealt(services, two)
    assert first["deck"] != second["deck"]  # the same seed, another game
    secret = redis_client.get(SECRET_KEY)
    assert secret is not None and len(secret) == 64
    again = build(settings).games.ctx.dealer.shuffle(one, 42)(1)  # another process
    assert [t.text for t in again.deck] == first["deck"] and again.salt == first["salt"]
    assert Dealer(True, lambda: secret).shuffle(one, 42)(1) == again


def test_a_configured_deck_secret_is_used_instead(redis_url, redis_client):
    settings = Settings(redis_url=redis_url, seeded_games=True, deck_secret="s3cret")
    services = build(settings)
    game_id, _ = create(create_app({"TESTING": True}, services=services).test_client(), seed=5)
    expected = Dealer(True, lambda: b"s3cret").shuffle(game_id, 5)(1)
    assert dealt(services, game_id)["salt"] == expected.salt
    assert redis_client.get(SECRET_KEY) is None


def test_with_seeded_games_off_a_seed_is_ignored(redis_url, redis_client):
    services = build(Settings(redis_url=redis_url))  # the default: off
    client = create_app({"TESTING": True}, services=services).test_client()
    (one, _), (two, _) = create(client, seed=42), create(client, seed=42)
    assert dealt(services, one)["deck"] != dealt(services, two)["deck"]
    assert services.store.meta(one)["seed"] == ""
    assert redis_client.get(SECRET_KEY) is None  # no seed honoured, no secret needed
