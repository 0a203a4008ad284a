"""A seat's live Idempotency-Keys are capped (issue 17): past the cap a new key is refused
and released, while every key kept still gives its first answer."""

from __future__ import annotations

import pytest

from service.usecases import errors, idempotency
from service.usecases.games import Games
from tests.memory_store import InMemoryEventStore

AT = "2024-05-01T12:00:00.000Z"
HUMANS = [{"name": "P0", "kind": "human"}, {"name": "P1", "kind": "human"}]


class NoQueue:
    """A TurnQueue for games without AI seats."""

    def enqueue_turn(self, game_id: str, version: int, lane: str = "fast") -> None:
        """Nothing to queue."""

    def heal_turn(self, game_id: str, version: int, lane: str = "fast") -> None:
        """Nothing to heal."""


def test_a_new_key_past_the_cap_is_refused_and_kept_keys_replay() -> None:
    store = InMemoryEventStore(idempotency_keys_per_seat=2)
    games = Games(store, NoQueue(), lambda: AT)
    created = games.create(HUMANS, {"hands": 1, "opening": "draw"}, 7)
    game_id = created.game_id
    idle = 1 - games.current_view(game_id, None).table.fields["turn"]
    for key in ("a", "b"):
        with pytest.raises(errors.OutOfTurn):
            games.move(game_id, idle, {"action": "draw"}, None, key)
    with pytest.raises(errors.TooManyKeys) as refused:
        games.move(game_id, idle, {"action": "draw"}, None, "c")
    assert 0 < refused.value.extra["retry_after"] <= 24 * 3600
    with pytest.raises(errors.OutOfTurn):  # a replay of a kept key, not a new one
        games.move(game_id, idle, {"action": "draw"}, None, "a")
    assert idempotency.key_name(game_id, idle, "c") not in store._keys  # released  # noqa: SLF001
    assert idempotency.key_name(game_id, idle, "a") in store._keys  # noqa: SLF001


def test_no_cap_when_the_setting_is_0() -> None:
    store = InMemoryEventStore(idempotency_keys_per_seat=0)
    games = Games(store, NoQueue(), lambda: AT)
    game_id = games.create(HUMANS, {"hands": 1, "opening": "draw"}, 7).game_id
    idle = 1 - games.current_view(game_id, None).table.fields["turn"]
    for key in map(str, range(5)):
        with pytest.raises(errors.OutOfTurn):
            games.move(game_id, idle, {"action": "draw"}, None, key)
