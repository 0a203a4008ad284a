"""A finished game's log is compacted: its Redis footprint shrinks at least 5-fold, and every
read of it (state, a past version, the log, the export) answers as before."""

from __future__ import annotations

import random
from contextlib import closing
from typing import Any

import redis

from service.adapters.redis_store import RedisEventStore, game_key
from service.game.audit import audit
from service.usecases.seat_views import View
from tests.support.storage import create, footprint, games_over, play_to_end

SHRINK = 5


def shown(view: View) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """Return what a view shows: its version, the table and the seat's own part."""
    return view.table.version, view.table.fields, view.own


def test_a_finished_ten_hand_game_shrinks_five_fold_and_reads_the_same(
        redis_client: redis.Redis) -> None:
    with closing(RedisEventStore(redis_client, compact=False)) as store:
        games = games_over(store)
        game_id = create(games, seed=11)
        version = play_to_end(games, game_id, random.Random(11))
        before = footprint(redis_client, game_id)
        log = games.export(game_id)
        past = shown(games.view_at(game_id, 0, version // 2))
        assert store.compact(game_id)
    after = footprint(redis_client, game_id)
    assert before >= SHRINK * after, (before, after)
    assert not redis_client.exists(game_key(game_id, "events"), game_key(game_id, "snap"))
    with closing(RedisEventStore(redis_client)) as fresh:  # no state kept: read from the blob
        games = games_over(fresh)
        assert games.export(game_id) == log and audit(log) is None
        assert games.events(game_id, None, version - 3) == log[-3:]
        assert shown(games.view_at(game_id, 0, version // 2)) == past
        table = games.current_view(game_id, None).table
        assert (table.version, table.fields["status"]) == (version, "finished")
        assert fresh.version(game_id) == version


def test_the_move_that_ends_a_game_compacts_it(redis_client: redis.Redis) -> None:
    with closing(RedisEventStore(redis_client)) as store:
        games = games_over(store)
        game_id = create(games, seed=5, rules={"hands": 1, "opening": "draw"})
        play_to_end(games, game_id, random.Random(5))
    assert redis_client.type(game_key(game_id, "log")) == b"string"
    assert not redis_client.exists(game_key(game_id, "events"), game_key(game_id, "snap"))
