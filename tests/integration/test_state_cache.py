"""Two API processes over one Redis: a move decided on a cached state that is behind the log
is never answered from that stale state (the append's version check and a second decision)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from service.adapters.bootstrap import Services, build
from service.adapters.settings import Settings
from service.game.state import replay
from service.usecases.errors import OutOfTurn, VersionMismatch
from service.usecases.loading import load


@pytest.fixture
def two_processes(redis_url: str, redis_client: Any) -> Iterator[tuple[Services, Services]]:
    """Two independent service instances (each with its own state cache) over one Redis."""
    both = build(Settings(redis_url=redis_url)), build(Settings(redis_url=redis_url))
    yield both
    for services in both:
        services.store.client.close()
        services.queue.connection.close()


def stale_game(a: Services, b: Services) -> tuple[str, int, int, dict[str, Any]]:
    """A game that `a` has cached at the version before `b` played the first seat's move.

    Returns the game id, the version `a` cached, and the seat and move `b` played.
    """
    players = [{"name": f"P{s}", "kind": "human"} for s in range(3)]
    game_id = a.games.create(players, {"hands": 1, "opening": "draw"}, 7).game_id
    seen = a.games.current_view(game_id, None).table  # `a` now caches this version
    seat = seen.fields["turn"]
    move = b.games.current_view(game_id, seat).own["legal_moves"][0]
    b.games.move(game_id, seat, move, None, None)
    return game_id, seen.version, seat, move


def next_move(services: Services, game_id: str) -> tuple[dict[str, Any], int, dict[str, Any]]:
    """Return the current spectator view's table, the seat to move and its first legal move."""
    current = services.games.current_view(game_id, None).table.fields
    seat = current["turn"]
    return current, seat, services.games.current_view(game_id, seat).own["legal_moves"][0]


def test_a_process_behind_the_log_applies_the_next_seats_legal_move(
        two_processes: tuple[Services, Services]) -> None:
    a, b = two_processes
    game_id, cached_version, _, _ = stale_game(a, b)
    current, seat, move = next_move(b, game_id)
    answer = a.games.move(game_id, seat, move, None, None)  # out of turn on a's cached state
    log = a.store.read(game_id)
    assert answer.table.version == len(log) > current["version"] > cached_version
    assert log[current["version"]]["seat"] == seat
    assert load(a.games.ctx, game_id).to_dict() == replay(log).to_dict()


def test_a_move_legal_only_on_the_stale_cache_is_refused_by_the_current_rules(
        two_processes: tuple[Services, Services]) -> None:
    a, b = two_processes
    game_id, cached_version, seat, move = stale_game(a, b)
    version = b.store.version(game_id)
    with pytest.raises(OutOfTurn) as refused:  # R4: that seat has moved already
        a.games.move(game_id, seat, move, None, None)
    assert refused.value.extra["rule"] == "R4"
    assert b.store.version(game_id) == version > cached_version


def test_if_match_on_the_stale_cache_version_is_a_mismatch_naming_the_current_version(
        two_processes: tuple[Services, Services]) -> None:
    a, b = two_processes
    game_id, cached_version, _, _ = stale_game(a, b)
    current, seat, move = next_move(b, game_id)
    with pytest.raises(VersionMismatch) as refused:
        a.games.move(game_id, seat, move, frozenset({cached_version}), None)
    assert refused.value.version == current["version"]
    assert b.store.version(game_id) == current["version"]
