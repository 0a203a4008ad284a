"""A game no client has moved in is forgotten after UNPLAYED_GAME_TTL_S (then 404 like any
unknown game); a client's move keeps it for good, and so does any move of a game of AI seats
only, which no client ever moves in. An AI's move in a game with a human seat does not."""

from __future__ import annotations

import time

import pytest

from service.usecases import errors
from service.usecases.games import Games
from tests.memory_store import InMemoryEventStore
from tests.unit.test_usecases import AIS, AT, HUMANS, RULES, FakeTurnQueue, first_legal, to_move

UNPLAYED_S = 0.3
MIXED = [HUMANS[0], AIS[1]]


@pytest.fixture
def games() -> Games:
    """The use cases over a store that keeps a game no client moved in UNPLAYED_S."""
    return Games(InMemoryEventStore(unplayed_game_ttl_s=UNPLAYED_S), FakeTurnQueue(), lambda: AT)


def ai_moves(games: Games, game_id: str) -> None:
    """Play the AI seats' turns until a human seat is to move or the match ends."""
    version = games.current_view(game_id, None).table.version
    while games.ai_turn(game_id, version, first_legal):
        version += 1


def ai_opened(games: Games) -> str:
    """Create games of a human and an AI seat until one where the AI opens; return its id."""
    for _ in range(100):  # the AI seat holds the opening tile about every other deal
        created = games.create(MIXED, RULES, None)
        ai_moves(games, created.game_id)
        if games.current_view(created.game_id, None).table.version > created.state.version:
            return created.game_id
    raise AssertionError("the AI seat never opened in 100 deals")


def test_only_games_a_client_moved_in_outlive_the_setting(games: Games) -> None:
    unplayed = games.create(HUMANS, RULES, 1).game_id
    played = games.create(HUMANS, RULES, 2).game_id
    _, seat, move = to_move(games, played)
    games.move(played, seat, move, None, None)
    ai_only = games.create(AIS, RULES, 4).game_id
    ai_moves(games, ai_only)
    mixed = ai_opened(games)  # its move alone keeps nothing
    time.sleep(UNPLAYED_S + 0.1)
    for gone in (unplayed, mixed):
        with pytest.raises(errors.NoSuchGame):
            games.current_view(gone, None)
    for kept in (played, ai_only):
        assert games.current_view(kept, None).table.version > 2
