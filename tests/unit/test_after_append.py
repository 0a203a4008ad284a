"""After an append only success: a turn queue that fails once the append landed fails neither
the creation nor the move, nor the AI's own turn; each turn not queued is counted."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

import pytest

from service.usecases.games import Games
from service.usecases.ports import StoreUnavailable
from tests.memory_store import InMemoryEventStore
from tests.unit.test_usecases import AIS, RULES, first_legal

FAULTS = [StoreUnavailable("redis: ConnectionError: Connection reset by peer"),
          RuntimeError("a bug in the queue")]
HUMAN_AND_AI = [{"name": "P0", "kind": "human"}, {"name": "A1", "kind": "ai", "level": "random"}]


class FailingQueue:
    """A TurnQueue whose every enqueue raises `error`; heals are recorded."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.healed: list[tuple[str, int]] = []

    def enqueue_turn(self, game_id: str, version: int, lane: str = "fast") -> None:
        """Fail, as a queue whose Redis is down does."""
        raise self.error

    def heal_turn(self, game_id: str, version: int, lane: str = "fast") -> None:
        """Record the heal."""
        self.healed.append((game_id, version))


class CountingMeter:
    """A Meter that counts the turns not queued."""

    def __init__(self) -> None:
        self.not_queued = 0

    def replay_timer(self) -> AbstractContextManager[object]:
        """Time nothing."""
        return nullcontext()

    def append_conflict(self) -> None:
        """Count nothing."""

    def turn_not_queued(self) -> None:
        """Count one turn not queued."""
        self.not_queued += 1


@pytest.fixture(params=FAULTS, ids=lambda e: type(e).__name__)
def queue(request: pytest.FixtureRequest) -> FailingQueue:
    """A queue failing with each fault in turn."""
    return FailingQueue(request.param)


@pytest.fixture
def meter() -> CountingMeter:
    """A meter that counts."""
    return CountingMeter()


@pytest.fixture
def games(queue: FailingQueue, meter: CountingMeter) -> Games:
    """The use cases over an in-memory store and the failing queue."""
    return Games(InMemoryEventStore(), queue, lambda: "2024-05-01T12:00:00.000Z", meter)


def test_a_creation_whose_ai_turn_cannot_be_queued_is_created(
        games: Games, queue: FailingQueue, meter: CountingMeter) -> None:
    created = games.create(AIS, RULES, 7)
    assert games.ctx.store.version(created.game_id) == created.state.version
    assert meter.not_queued == 1
    games.current_view(created.game_id, None)  # the next read heals the turn
    assert queue.healed == [(created.game_id, created.state.version)]


def test_a_move_whose_ai_turn_cannot_be_queued_is_answered_with_its_view(
        games: Games, meter: CountingMeter) -> None:
    for seed in range(50):  # a game whose human seat moves, then the AI seat
        created = games.create(HUMAN_AND_AI, RULES, seed)
        if created.state.turn == 0:
            break
    game_id, state = created.game_id, created.state
    not_queued = meter.not_queued  # the games whose AI seat moved first (decks are random)
    while games.current_view(game_id, None).table.fields["turn"] == 0:  # a draw keeps it
        legal = games.current_view(game_id, 0).own["legal_moves"][0]
        shown = games.move(game_id, 0, legal, None, None)
        assert shown.table.version == games.ctx.store.version(game_id) > state.version
    assert meter.not_queued == not_queued + 1


def test_an_ai_turn_whose_next_turn_cannot_be_queued_is_played(
        games: Games, meter: CountingMeter) -> None:
    created = games.create(AIS, RULES, 7)
    assert games.ai_turn(created.game_id, created.state.version, first_legal) is True
    assert games.ctx.store.version(created.game_id) > created.state.version
    assert meter.not_queued == 2  # the creation's turn, then the next one
