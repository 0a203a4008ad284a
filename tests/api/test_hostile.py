"""Hostile input: borrowed, foreign and tampered tokens, replayed Idempotency-Keys, floods
(per-token and per-address rate limits), oversized bodies and cross-origin requests."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from flask import Flask

from service.adapters.bootstrap import build
from service.adapters.settings import Settings
from service.api.app import create_app
from service.api.schemas import NAME
from tests.api.driver import auth, create


def build_app(redis_url: str, **settings: Any) -> Flask:
    """An app over the test Redis with some settings changed."""
    return create_app({"TESTING": True}, services=build(Settings(redis_url=redis_url, **settings)))


def post_move(client: Any, game_id: str, token: str, body: dict[str, Any], **headers: str) -> Any:
    """Send a move with a seat token."""
    return client.post(f"/v1/games/{game_id}/moves", json=body,
                       headers={**auth(token), **headers})


def version(client: Any, game_id: str) -> int:
    """The game's current version, as a spectator sees it."""
    return client.get(f"/v1/games/{game_id}").json["version"]


def fresh_window() -> None:
    """Wait out the last seconds of a rate-limit window, so a test's requests share one."""
    left = 60 - time.time() % 60
    if left < 5:
        time.sleep(left)


def test_another_seats_token_acts_only_as_that_seat(client):
    game_id, tokens = create(client, seats=2, seed=7)
    mover = client.get(f"/v1/games/{game_id}").json["turn"]
    other = 1 - mover
    theirs = client.get(f"/v1/games/{game_id}", headers=auth(tokens[mover])).json
    mine = client.get(f"/v1/games/{game_id}", headers=auth(tokens[other])).json
    assert mine["seat"] == other and mine["hand"] != theirs["hand"]
    answer = post_move(client, game_id, tokens[other], theirs["legal_moves"][0])
    assert answer.status_code == 409 and answer.json["rule"] == "R4"
    assert version(client, game_id) == theirs["version"]


def test_a_token_of_another_game_is_403_everywhere(client):
    game_id, _ = create(client, seats=2)
    _, foreign = create(client, seats=2)
    before = version(client, game_id)
    for path in ("", "/events", f"/state?version={before}"):
        assert client.get(f"/v1/games/{game_id}{path}",
                          headers=auth(foreign[0])).status_code == 403
    assert post_move(client, game_id, foreign[0], {"action": "draw"}).status_code == 403
    assert version(client, game_id) == before


@pytest.mark.parametrize("tamper", [
    lambda own, foreign: own[:-1] + ("A" if own[-1] != "A" else "B"),  # one character changed
    lambda own, foreign: own[:-3],  # truncated
    lambda own, foreign: own.swapcase(),
    lambda own, foreign: own.partition(".")[0] + "." + foreign.partition(".")[2],
    lambda own, foreign: foreign.partition(".")[0] + "." + own.partition(".")[2],
    lambda own, foreign: "0123456789abcdef." + own.partition(".")[2],  # no such game
], ids=["flipped", "truncated", "swapcase", "foreign-secret", "foreign-prefix", "no-game"])
def test_a_tampered_token_is_401_never_a_seat_nor_a_spectator(client, tamper):
    game_id, tokens = create(client, seats=2, seed=7)
    _, foreign = create(client, seats=2)
    forged = tamper(tokens[0], foreign[0])
    before = version(client, game_id)
    looked = client.get(f"/v1/games/{game_id}", headers=auth(forged))
    moved = post_move(client, game_id, forged, {"action": "draw"})
    assert looked.status_code == moved.status_code == 401
    assert moved.mimetype == "application/problem+json"
    assert version(client, game_id) == before


def test_old_idempotency_keys_replay_only_for_the_seat_and_game_that_sent_them(client):
    game_id, tokens = create(client, seats=2, seed=7)
    first = client.get(f"/v1/games/{game_id}").json["turn"]
    second = 1 - first
    move = client.get(f"/v1/games/{game_id}", headers=auth(tokens[first])).json["legal_moves"][0]
    answered = post_move(client, game_id, tokens[first], move, **{"Idempotency-Key": "K"})
    assert answered.status_code == 200
    reply = client.get(f"/v1/games/{game_id}", headers=auth(tokens[second])).json["legal_moves"]
    later = post_move(client, game_id, tokens[second], reply[0], **{"Idempotency-Key": "K2"})
    assert later.status_code == 200
    replayed = post_move(client, game_id, tokens[first], move, **{"Idempotency-Key": "K"})
    assert replayed.status_code == 200 and replayed.json == answered.json
    stolen = post_move(client, game_id, tokens[second], move, **{"Idempotency-Key": "K"})
    assert stolen.status_code == 409 and stolen.json["rule"] == "R4"  # its own key: not its turn
    assert version(client, game_id) == later.json["version"]
    twin_id, twin_tokens = create(client, seats=2, seed=7)  # another game, another deal
    twin = client.get(f"/v1/games/{twin_id}").json
    seat = twin["turn"]
    own = client.get(f"/v1/games/{twin_id}", headers=auth(twin_tokens[seat])).json
    fresh = post_move(client, twin_id, twin_tokens[seat], own["legal_moves"][0],
                      **{"Idempotency-Key": "K"})
    assert fresh.status_code == 200
    assert fresh.json["game_id"] == twin_id and fresh.json["version"] > twin["version"]


def test_a_token_over_its_limit_gets_429_with_retry_after(redis_url, redis_client):
    fresh_window()
    app = build_app(redis_url, rate_limit_per_token=3, rate_limit_per_address=0)
    client = app.test_client()
    game_id, tokens = create(client, seats=2)
    for _ in range(3):
        assert client.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).status_code == 200
    limited = client.get(f"/v1/games/{game_id}", headers=auth(tokens[0]))
    assert limited.status_code == 429
    assert limited.mimetype == "application/problem+json"
    assert limited.json["type"] == "/problems/rate-limited" and limited.json["status"] == 429
    assert abs(int(limited.headers["Retry-After"]) - (60 - time.time() % 60)) <= 1.5
    assert post_move(client, game_id, tokens[0], {"action": "draw"}).status_code == 429
    assert client.get(f"/v1/games/{game_id}", headers=auth(tokens[1])).status_code == 200
    assert client.get(f"/v1/games/{game_id}").status_code == 200
    keys = [key.decode() for key in redis_client.keys("rl:*")]
    assert len(keys) == 2 and all(re.fullmatch(r"rl:\{token:[0-9a-f]{64}\}:\d+", k) for k in keys)
    assert not any(token in key for key in keys for token in tokens.values())


def test_an_address_over_its_limit_gets_429_on_every_route_but_health_and_metrics(
        redis_url, redis_client):
    fresh_window()
    client = build_app(redis_url, rate_limit_per_address=5, rate_limit_per_token=0).test_client()
    for _ in range(5):
        assert client.get("/v1/games/nope").status_code == 404
    for limited in (client.get("/v1/games/nope"), client.post("/v1/games", json={})):
        assert limited.status_code == 429
        assert 1 <= int(limited.headers["Retry-After"]) <= 60
    assert client.get("/healthz").status_code == 200
    assert client.get("/metrics").status_code == 200
    elsewhere = client.get("/v1/games/nope", environ_base={"REMOTE_ADDR": "203.0.113.9"})
    assert elsewhere.status_code == 404
    assert [k.decode() for k in redis_client.keys("rl:{addr:127.0.0.1}:*")] != []


def test_the_body_size_limit_is_a_setting(redis_url, redis_client):
    client = build_app(redis_url, max_body_bytes=100).test_client()
    players = [{"name": "A", "kind": "human"}, {"name": "B", "kind": "human"}]
    assert client.post("/v1/games", json={"players": players}).status_code == 201
    large = client.post("/v1/games", json={"players": players, "pad": "x" * 100})
    assert large.status_code == 413 and large.mimetype == "application/problem+json"


def test_cors_is_off_by_default(client):
    origin = {"Origin": "https://app.example"}
    answers = [client.get("/healthz", headers=origin),
               client.options("/v1/games", headers={**origin,
                                                    "Access-Control-Request-Method": "POST"})]
    for answer in answers:
        assert not [h for h, _ in answer.headers if h.lower().startswith("access-control")]
        assert "Origin" not in answer.vary


@pytest.fixture
def cors_client(redis_url, redis_client):
    """A client of an app that allows two origins."""
    app = build_app(redis_url, cors_origins="https://app.example, https://admin.example")
    return app.test_client()


def test_cors_marks_answers_to_allowed_origins_only(cors_client):
    allowed = cors_client.get("/v1/games/nope", headers={"Origin": "https://admin.example"})
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://admin.example"
    assert {"ETag", "Retry-After", "Location"} <= {
        h.strip() for h in allowed.headers["Access-Control-Expose-Headers"].split(",")}
    assert "Origin" in allowed.vary
    refused = cors_client.get("/v1/games/nope", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in refused.headers
    assert "Origin" in refused.vary


def test_cors_answers_a_preflight_from_an_allowed_origin(cors_client):
    ask = {"Origin": "https://app.example", "Access-Control-Request-Method": "POST",
           "Access-Control-Request-Headers": "authorization, if-match, idempotency-key"}
    answer = cors_client.options("/v1/games/abc/moves", headers=ask)
    assert answer.status_code == 204
    assert answer.headers["Access-Control-Allow-Origin"] == "https://app.example"
    assert "POST" in answer.headers["Access-Control-Allow-Methods"]
    allowed = answer.headers["Access-Control-Allow-Headers"]
    for header in ("Authorization", "If-Match", "Idempotency-Key", "Last-Event-ID"):
        assert header in allowed
    evil = cors_client.options("/v1/games/abc/moves",
                               headers={**ask, "Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in evil.headers


def test_cors_star_allows_any_origin(redis_url, redis_client):
    client = build_app(redis_url, cors_origins="*").test_client()
    answer = client.get("/healthz", headers={"Origin": "https://anywhere.example"})
    assert answer.headers["Access-Control-Allow-Origin"] == "https://anywhere.example"


def test_a_name_with_a_lone_surrogate_is_400_not_a_crash(client):
    body = b'{"players": [{"name": "\\ud800", "kind": "human"}, {"name": "B", "kind": "human"}]}'
    answer = client.post("/v1/games", data=body, content_type="application/json")
    assert answer.status_code == 400
    assert answer.json["errors"][0]["field"] == "players.0.name"


@pytest.mark.parametrize("name", ["", "   ", "A\u0000B", "Ann\n", "\u001b[31mred",
                                  "\u202eevil", "x\u2066y", "\u0085"])
def test_a_blank_name_or_one_with_a_control_or_an_override_is_400(client, redis_client, name):
    body = {"players": [{"name": name, "kind": "human"}, {"name": "B", "kind": "human"}]}
    answer = client.post("/v1/games", json=body)
    assert answer.status_code == 400
    assert [e["field"] for e in answer.json["errors"]] == ["players.0.name"]
    assert redis_client.keys("game:*") == []


def test_a_name_of_any_script_with_inner_spaces_and_emoji_is_kept_as_sent(client):
    names = ["Zoë 🎲", "  Bo  ", "علي", "李 小龍"]
    body = {"players": [{"name": name, "kind": "human"} for name in names]}
    answer = client.post("/v1/games", json=body)
    assert answer.status_code == 201
    assert [seat["name"] for seat in answer.json["seats"]] == names


def test_openapi_states_the_names_pattern_the_service_checks():
    spec = yaml.safe_load((Path(__file__).parents[2] / "openapi.yaml").read_text())
    name = spec["components"]["schemas"]["PlayerRequest"]["properties"]["name"]
    assert name["pattern"] == NAME.pattern


def test_an_unknown_field_named_by_a_lone_surrogate_is_named_back_in_a_400(client):
    answer = client.post("/v1/games", data=b'{"\\ud800": 1}', content_type="application/json")
    assert answer.status_code == 400
    assert "\ud800" in [error["field"] for error in answer.json["errors"]]


@pytest.mark.parametrize("key", [None, "k1"], ids=["no key", "Idempotency-Key"])
def test_an_end_with_a_lone_surrogate_is_400_with_or_without_a_key(client, key):
    game_id, tokens = create(client, seats=2, seed=3)
    turn = client.get(f"/v1/games/{game_id}").json["turn"]
    headers = {**auth(tokens[turn]), **({"Idempotency-Key": key} if key else {})}
    body = b'{"action": "play", "tile": "9-9", "end": "\\udc00"}'
    for _ in range(2):  # under a key, the second answer is the first one again
        answer = client.post(f"/v1/games/{game_id}/moves", data=body, headers=headers,
                             content_type="application/json")
        assert answer.status_code == 400
        assert [error["field"] for error in answer.json["errors"]] == ["end"]


def test_a_400_naming_a_lone_surrogate_field_is_kept_and_replayed_under_its_key(client):
    game_id, tokens = create(client, seats=2, seed=3)
    turn = client.get(f"/v1/games/{game_id}").json["turn"]
    headers = {**auth(tokens[turn]), "Idempotency-Key": "k2"}
    answers = [client.post(f"/v1/games/{game_id}/moves", data=b'{"action": "pass", "\\ud800": 1}',
                           headers=headers, content_type="application/json") for _ in range(2)]
    assert [a.status_code for a in answers] == [400, 400]
    assert answers[0].json == answers[1].json
    assert "\ud800" in [error["field"] for error in answers[1].json["errors"]]


def test_the_token_limit_counts_a_token_however_bearer_is_spelt(redis_url, redis_client):
    fresh_window()
    client = build_app(redis_url, rate_limit_per_token=3, rate_limit_per_address=0).test_client()
    game_id, tokens = create(client, seats=2)
    spellings = ["Bearer {}", "bearer {}", "BEARER  {}", "bEaReR {}"]
    answers = [client.get(f"/v1/games/{game_id}", headers={"Authorization": s.format(tokens[0])})
               for s in spellings]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]


def test_an_unknown_game_is_404_even_for_a_token_over_its_limit(redis_url, redis_client):
    fresh_window()
    client = build_app(redis_url, rate_limit_per_token=1, rate_limit_per_address=0).test_client()
    game_id, tokens = create(client, seats=2)
    assert client.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).status_code == 200
    assert client.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).status_code == 429
    assert client.get("/v1/games/nope", headers=auth(tokens[0])).status_code == 404


@pytest.mark.parametrize("path", ["/v1//games/{}", "/v1/games//{}", "//v1/games/{}"])
def test_a_path_with_doubled_slashes_is_404_not_a_redirect(client, path):
    game_id, _ = create(client, seats=2)
    answer = client.get("/", environ_overrides={"PATH_INFO": path.format(game_id)})
    assert answer.status_code == 404 and answer.mimetype == "application/problem+json"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(client, constant):
    body = '{"players": [{"name": "A", "kind": "human"}, {"name": "B", "kind": "human"}], ' \
           f'"seed": {constant}}}'
    answer = client.post("/v1/games", data=body, content_type="application/json")
    assert answer.status_code == 400
    assert answer.json["errors"] == [{"field": "body", "message": "not JSON"}]


@pytest.mark.parametrize("coding", ["gzip, chunked", "deflate,chunked", "identity"])
def test_a_body_in_a_transfer_coding_besides_chunked_is_501(client, coding):
    players = [{"name": "A", "kind": "human"}, {"name": "B", "kind": "human"}]
    answer = client.post("/v1/games", json={"players": players},
                         headers={"Transfer-Encoding": coding})
    assert answer.status_code == 501
    assert answer.json["type"] == "/problems/not-implemented"
    game_id, tokens = create(client, seats=2)
    answer = client.post(f"/v1/games/{game_id}/moves", json={"action": "draw"},
                         headers={**auth(tokens[0]), "Transfer-Encoding": coding})
    assert answer.status_code == 501


def test_a_body_cut_short_of_its_content_length_is_400_naming_the_body(client):
    cut = io.BytesIO(b'{"players": [')  # the client went away mid-body
    answer = client.post("/v1/games", input_stream=cut, content_type="application/json",
                         environ_overrides={"CONTENT_LENGTH": "100"})
    assert answer.status_code == 400
    assert answer.json["type"] == "/problems/invalid-request"
    assert answer.json["errors"] == [{"field": "body", "message": "cut short"}]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32-le", "latin-1"])
def test_a_body_not_in_utf8_is_not_json(client, encoding):
    players = '[{"name": "Zoë", "kind": "human"}, {"name": "B", "kind": "human"}]'
    body = f'{{"players": {players}}}'.encode(encoding)
    answer = client.post("/v1/games", data=body, content_type="application/json")
    assert answer.status_code == 400
    assert answer.json["errors"] == [{"field": "body", "message": "not JSON"}]
    assert client.post("/v1/games", data=b"\xef\xbb\xbf" + body.decode(encoding).encode(),
                       content_type="application/json").status_code == 201  # a UTF-8 BOM is fine
