"""gzip where it pays: answers of GZIP_MIN_BYTES or more, for clients that take it; never the
event stream nor an answer without a body. The ContractClient decodes and checks each one."""

from __future__ import annotations

import json
import zlib

import pytest

from service.adapters.bootstrap import build
from service.adapters.settings import Settings
from service.api.app import create_app
from service.api.compression import takes_gzip
from tests.api.contract import ContractClient
from tests.api.driver import auth, create

GZIP = {"Accept-Encoding": "gzip"}


@pytest.fixture
def game(client):
    """A game played on until seat 0's state and log are each over 1 KB (a fresh deal's are
    about 550 bytes; the state mid-hand, with its layout and legal moves, 1-3 KB)."""
    game_id, tokens = create(client, seats=2, seed=9)
    for _ in range(60):
        state = client.get(f"/v1/games/{game_id}", headers=auth(tokens[0]))
        log = client.get(f"/v1/games/{game_id}/events", headers=auth(tokens[0]))
        if min(len(state.get_data()), len(log.get_data())) > 1100:
            return game_id, tokens
        seat = state.json["turn"]
        move = client.get(f"/v1/games/{game_id}", headers=auth(tokens[seat])).json
        client.post(f"/v1/games/{game_id}/moves", json=move["legal_moves"][0],
                    headers=auth(tokens[seat]))
    raise AssertionError("the game never grew past 1 KB")


def test_a_state_is_gzipped_for_a_client_that_takes_it(client, game):
    game_id, tokens = game
    plain = client.get(f"/v1/games/{game_id}", headers=auth(tokens[0]))
    zipped = client.get(f"/v1/games/{game_id}", headers={**auth(tokens[0]), **GZIP})
    assert len(plain.get_data()) >= 1024 and "Content-Encoding" not in plain.headers
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert int(zipped.headers["Content-Length"]) == len(zipped.get_data()) \
        < len(plain.get_data()) / 2
    assert json.loads(zlib.decompress(zipped.get_data(), wbits=31)) == plain.json
    for answer in (plain, zipped):  # a cache keeps the two apart, and each caller's
        assert {"Accept-Encoding", "Authorization"} <= set(answer.vary)
    assert zipped.headers["ETag"] == plain.headers["ETag"]


@pytest.mark.parametrize(("sent", "takes"), [
    ("gzip", True), ("GZIP", True), ("br, gzip;q=0.5", True), ("*", True),
    ("deflate, *;q=0.1", True), ("x-gzip", True), ("gzip;q=0", False), ("*;q=0", False),
    ("gzip;q=0, *", False), ("identity", False), ("", False), ("br", False),
    ("gzip;q=x", False)])
def test_accept_encoding_is_read_with_its_q_values(sent, takes):
    assert takes_gzip(sent) is takes


def test_a_client_that_refuses_gzip_gets_plain_answers(client, game):
    game_id, tokens = game
    answer = client.get(f"/v1/games/{game_id}", headers={
        **auth(tokens[0]), "Accept-Encoding": "gzip;q=0, br"})
    assert "Content-Encoding" not in answer.headers and answer.json["hand"]


def test_short_answers_and_304s_are_never_gzipped_and_vary_as_the_rest(client, game):
    """Whether an answer is gzipped depends on Accept-Encoding: every answer that may be says
    so (Vary), a 304 too, with the Vary its 200 has (RFC 9110 15.4.5)."""
    game_id, tokens = game
    for path in ("/healthz", "/v1/games/0123456789abcdef", f"/v1/games/{game_id}/events?after=99"):
        answer = client.get(path, headers=GZIP)
        assert len(answer.get_data()) < 1024
        assert "Content-Encoding" not in answer.headers and "Accept-Encoding" in answer.vary
    whole = client.get(f"/v1/games/{game_id}", headers={**auth(tokens[0]), **GZIP})
    not_modified = client.get(f"/v1/games/{game_id}", headers={
        **auth(tokens[0]), **GZIP, "If-None-Match": whole.headers["ETag"]})
    assert not_modified.status_code == 304 and "Content-Encoding" not in not_modified.headers
    assert whole.headers["Vary"] == not_modified.headers["Vary"] == "Authorization, Accept-Encoding"


def test_a_long_log_and_a_head_are_gzipped_too(client, game):
    game_id, tokens = game
    log = client.get(f"/v1/games/{game_id}/events", headers={**auth(tokens[0]), **GZIP})
    assert log.headers["Content-Encoding"] == "gzip"
    assert json.loads(zlib.decompress(log.get_data(), wbits=31))["events"]
    head = client.head(f"/v1/games/{game_id}", headers={**auth(tokens[0]), **GZIP})
    zipped = client.get(f"/v1/games/{game_id}", headers={**auth(tokens[0]), **GZIP})
    assert head.headers["Content-Length"] == zipped.headers["Content-Length"]


def test_the_event_stream_is_never_gzipped(app, game):
    game_id, _ = game
    with app.test_client() as raw:
        answer = raw.get(f"/v1/games/{game_id}/stream", headers=GZIP, buffered=False)
        first = next(iter(answer.response))
        answer.close()
    assert answer.mimetype == "text/event-stream"
    assert first.startswith(b"retry: 2000\n\nid: 1\nevent: game_created\ndata: {")  # plain
    assert "Content-Encoding" not in answer.headers


def test_gzip_min_bytes_0_turns_compression_off(redis_url, redis_client):
    settings = Settings(redis_url=redis_url, seeded_games=True, gzip_min_bytes=0,
                        rate_limit_per_token=0, rate_limit_per_address=0)
    client = ContractClient(create_app({"TESTING": True},
                                       services=build(settings)).test_client())
    create(client, seats=2, seed=9)
    answer = client.get("/metrics", headers=GZIP)
    assert len(answer.get_data()) >= 1024 and "Content-Encoding" not in answer.headers


def test_metrics_are_gzipped_for_prometheus(client):
    """Prometheus asks with Accept-Encoding: gzip; the text is many KB."""
    answer = client.get("/metrics", headers=GZIP)
    assert answer.headers["Content-Encoding"] == "gzip"
    assert b"spinner_http_requests" in zlib.decompress(answer.get_data(), wbits=31)
