"""Quotas by who is asking (issue 17): a back end by its API key, a seat by its token, and
only anonymous requests by the address. Every answer is checked against openapi.yaml."""

from __future__ import annotations

import hashlib
import re
import time
from typing import Any

import pytest

from service.adapters.bootstrap import build
from service.adapters.settings import Settings
from service.api.app import create_app
from tests.api.contract import ContractClient
from tests.api.driver import auth, create
from tests.api.test_hostile import fresh_window

KEY = "k3y-0f-the-back-end-7f4b2c"
ADDRESS = "198.51.100.7"  # the back end and the anonymous flood share it
GAMES, REQUESTS_PER_GAME_S = 500, 2  # a human moves about once a second and polls the state


def sha256(text: str) -> str:
    """The hex SHA-256 an operator puts in API_KEYS."""
    return hashlib.sha256(text.encode()).hexdigest()


def clients(redis_url: str, **settings: Any) -> tuple[ContractClient, ContractClient]:
    """A keyed client and an anonymous one, from the same address, over one app whose only
    key is KEY (named `backend`)."""
    settings = {"api_keys": f"backend:{sha256(KEY)}", **settings}
    app = create_app({"TESTING": True}, services=build(Settings(redis_url=redis_url, **settings)))
    keyed, anonymous = app.test_client(), app.test_client()
    keyed.environ_base.update(REMOTE_ADDR=ADDRESS, HTTP_X_API_KEY=KEY)
    anonymous.environ_base.update(REMOTE_ADDR=ADDRESS)
    return ContractClient(keyed), ContractClient(anonymous)


def test_a_keyed_back_end_goes_on_past_the_address_limit_while_an_anonymous_flood_is_refused(
        redis_url, redis_client):
    fresh_window()
    keyed, anonymous = clients(redis_url, rate_limit_per_address=20, rate_limit_per_token=0)
    games = [create(keyed, seats=2, seed=s) for s in range(10)]  # creations count on the key
    for game_id, tokens in games * 3:
        assert keyed.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).status_code == 200
        assert keyed.get(f"/v1/games/{game_id}").status_code == 200
    flood = [anonymous.get(f"/v1/games/{games[0][0]}").status_code for _ in range(25)]
    assert flood == [200] * 20 + [429] * 5
    assert anonymous.post("/v1/games", json={}).status_code == 429
    assert create(keyed, seats=2)[0]  # the 71st keyed request: still served
    kinds = {re.sub(r"rl:\{(\w+):.*", r"\1", k.decode()) for k in redis_client.keys("rl:*")}
    assert kinds == {"key", "addr"}  # no token windows: the back end's tokens count on its key
    assert int(redis_client.get(next(iter(redis_client.keys("rl:{key:backend}:*"))))) == 71


def test_seat_token_requests_count_against_the_token_not_the_address(redis_url, redis_client):
    fresh_window()
    _, anonymous = clients(redis_url, rate_limit_per_address=5, rate_limit_per_token=12)
    game_id, tokens = create(anonymous, seats=2)  # 1 on the address
    answers = [anonymous.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).status_code
               for _ in range(13)]
    assert answers == [200] * 12 + [429]
    assert [anonymous.get(f"/v1/games/{game_id}").status_code for _ in range(5)] == \
        [200] * 4 + [429]  # the address had counted the creation only


def test_a_forged_or_foreign_token_counts_against_the_address(redis_url, redis_client):
    fresh_window()
    _, anonymous = clients(redis_url, rate_limit_per_address=4, rate_limit_per_token=0)
    game_id, tokens = create(anonymous, seats=2)  # 1
    _, foreign = create(anonymous, seats=2)  # 2
    forged = tokens[0][:-2] + ("AA" if not tokens[0].endswith("AA") else "BB")
    assert anonymous.get(f"/v1/games/{game_id}", headers=auth(forged)).status_code == 401  # 3
    assert anonymous.get(f"/v1/games/{game_id}",
                         headers=auth(foreign[0])).status_code == 403  # 4
    assert anonymous.get(f"/v1/games/{game_id}", headers=auth(forged)).status_code == 429
    assert anonymous.post("/v1/games", json={}, headers=auth(tokens[0])).status_code == 429
    assert anonymous.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).status_code == 200


@pytest.mark.parametrize("sent", ["not-a-key-of-this-service", "", sha256(KEY), KEY.upper()])
def test_an_unknown_key_is_401_and_never_echoed(redis_url, redis_client, sent):
    keyed, _ = clients(redis_url, rate_limit_per_address=0, rate_limit_per_token=0)
    for answer in (keyed.post("/v1/games", json={}, headers={"X-Api-Key": sent}),
                   keyed.get("/v1/games/nope", headers={"X-Api-Key": sent})):
        assert answer.status_code == 401 and answer.mimetype == "application/problem+json"
        assert answer.json["type"] == "/problems/unknown-api-key"
        assert answer.headers["WWW-Authenticate"] == 'ApiKey header="X-Api-Key"'
        shown = answer.get_data(as_text=True) + str(answer.headers)
        assert not sent.strip() or sent.strip() not in shown
    assert keyed.get("/healthz", headers={"X-Api-Key": "nope"}).status_code == 200


def test_keys_are_held_by_their_hash_and_counted_by_their_name(redis_url, redis_client):
    fresh_window()
    keyed, _ = clients(redis_url, rate_limit_per_address=1, rate_limit_per_token=1)
    game_id, tokens = create(keyed, seats=2)
    assert keyed.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).status_code == 200
    assert keyed.get(f"/v1/games/{game_id}", headers=auth(tokens[0])).status_code == 200
    keys = [k.decode() for k in redis_client.keys("rl:*")]
    assert len(keys) == 1 and re.fullmatch(r"rl:\{key:backend\}:\d+", keys[0])
    with pytest.raises(ValueError, match="entry 1 is not"):
        clients(redis_url, api_keys=f"backend:{KEY}")  # the key itself: refused at start


def test_a_key_with_its_own_quota_is_refused_past_it(redis_url, redis_client):
    fresh_window()
    keyed, anonymous = clients(redis_url, api_keys=f"backend:{sha256(KEY)}:3")
    assert [keyed.get("/v1/games/nope").status_code for _ in range(4)] == [404] * 3 + [429]
    limited = keyed.get("/v1/games/nope")
    assert "per key" in limited.json["detail"] and 1 <= int(limited.headers["Retry-After"]) <= 60
    assert anonymous.get("/v1/games/nope").status_code == 404


def test_the_default_quota_lets_one_key_run_500_games_from_one_address(redis_url, redis_client):
    """Each of 500 games: a human's move and a poll of the state a second, for a minute. The
    window already holds all but the last of them; the last is served. The same count from
    an anonymous address is far past its limit."""
    fresh_window()
    keyed, anonymous = clients(redis_url)  # the default limits
    budget = GAMES * REQUESTS_PER_GAME_S * 60
    window = int(time.time() // 60)
    redis_client.set(f"rl:{{key:backend}}:{window}", budget - 1, ex=60)
    redis_client.set(f"rl:{{addr:{ADDRESS}}}:{window}", budget - 1, ex=60)
    assert keyed.get("/v1/games/nope").status_code == 404  # the budget's last: served
    assert anonymous.get("/v1/games/nope").status_code == 429


HUMAN_VS_AI = {"players": [{"name": "H", "kind": "human"},
                           {"name": "G", "kind": "ai", "level": "greedy"}], "rules": {"hands": 1}}


def test_by_default_one_key_holds_500_ai_games_while_an_anonymous_flood_is_refused(
        redis_url, redis_client):
    keyed, anonymous = clients(redis_url)  # default limits and caps, one address
    made = [keyed.post("/v1/games", json=HUMAN_VS_AI).status_code for _ in range(500)]
    assert made == [201] * 500
    flood = [anonymous.post("/v1/games", json=HUMAN_VS_AI).status_code for _ in range(6)]
    assert flood == [201] * 4 + [429] * 2  # the address's 4 open games with AI seats
