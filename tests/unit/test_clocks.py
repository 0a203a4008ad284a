"""Turn clocks and leaving in the use cases, over the in-memory store and a recording queue
(API.md "Turn clocks", "Leaving")."""

from __future__ import annotations

from datetime import datetime

import pytest
from prometheus_client import REGISTRY

from service.adapters.metrics import PrometheusMeter
from service.game import events as ev
from service.game.state import GameState
from service.game.views import view
from service.rules.moves import Move
from service.usecases import errors
from service.usecases.decks import Dealer
from service.usecases.games import Games
from tests.memory_store import InMemoryEventStore

HUMANS = [{"name": "P0", "kind": "human"}, {"name": "P1", "kind": "human"}]
CLOCK = {"hands": 1, "opening": "draw", "turn_seconds": 10, "timeouts_to_leave": 3}
AT, LATER = "2024-05-01T12:00:00.000Z", "2024-05-01T12:00:10.000Z"


class ClockQueue:
    """A TurnQueue that records AI turns and clocks: (what, game id, version, due or None)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int, float | None]] = []

    def enqueue_turn(self, game_id: str, version: int, lane: str = "fast") -> None:
        """Record a queued AI turn."""
        self.calls.append(("turn", game_id, version, None))

    def heal_turn(self, game_id: str, version: int, lane: str = "fast") -> None:
        """Record a healed AI turn."""
        self.calls.append(("heal-turn", game_id, version, None))

    def schedule_clock(self, game_id: str, version: int, due: float) -> None:
        """Record a scheduled clock."""
        self.calls.append(("clock", game_id, version, due))

    def heal_clock(self, game_id: str, version: int, due: float) -> None:
        """Record a healed clock."""
        self.calls.append(("heal-clock", game_id, version, due))


class Clock:
    """A clock the test sets."""

    def __init__(self) -> None:
        self.now = AT

    def __call__(self) -> str:
        return self.now


@pytest.fixture
def clock() -> Clock:
    """The use cases' clock, at AT until a test moves it."""
    return Clock()


@pytest.fixture
def queue() -> ClockQueue:
    """A queue that only records."""
    return ClockQueue()


@pytest.fixture
def games(queue: ClockQueue, clock: Clock) -> Games:
    """The use cases over an empty store."""
    return Games(InMemoryEventStore(), queue, clock,
                 dealer=Dealer(seeded=True, secret=lambda: b"secret"))


@pytest.fixture
def game(games: Games) -> tuple[str, dict[int, str]]:
    """A two-human game with a 10 s clock: its id and tokens."""
    created = games.create(HUMANS, CLOCK, 7)
    return created.game_id, created.tokens


def first_legal(state: GameState, seat: int, _log: list[ev.Event], _left_s: float) -> Move:
    """A chooser: the seat's first legal move."""
    return Move.from_dict(view(state, seat)["legal_moves"][0])


def to_move(games: Games, game_id: str) -> tuple[int, int]:
    """The game's version and the seat to move."""
    table = games.current_view(game_id, None).table
    return table.version, table.fields["turn"]


def test_a_human_turn_under_a_clock_schedules_its_job_at_the_deadline(
        games: Games, game: tuple[str, dict[int, str]], queue: ClockQueue) -> None:
    game_id, _ = game
    version, _ = to_move(games, game_id)
    due = datetime.fromisoformat(LATER).timestamp()
    assert ("clock", game_id, version, due) in queue.calls
    assert games.current_view(game_id, None).table.fields["turn_deadline"] == LATER
    assert ("heal-clock", game_id, version, due) in queue.calls  # each read heals it


def test_a_clock_that_runs_out_appends_the_timeout_and_a_move_at_its_version(
        games: Games, game: tuple[str, dict[int, str]], queue: ClockQueue, clock: Clock) -> None:
    game_id, _ = game
    version, seat = to_move(games, game_id)
    clock.now = LATER
    assert games.run_out_clock(game_id, version, first_legal)
    log = games.events(game_id, None, version)
    assert [log[0]["type"], log[0]["seat"], log[1]["seat"]] == [ev.TURN_TIMED_OUT, seat, seat]
    after, _ = to_move(games, game_id)
    assert ("clock", game_id, after, datetime.fromisoformat(LATER).timestamp() + 10) \
        in queue.calls  # the next human turn has its own clock


def test_each_clock_that_runs_out_is_counted(queue: ClockQueue, clock: Clock) -> None:
    games = Games(InMemoryEventStore(), queue, clock, PrometheusMeter(),
                  Dealer(seeded=True, secret=lambda: b"secret"))
    game_id = games.create(HUMANS, CLOCK, 7).game_id
    before = REGISTRY.get_sample_value("spinner_turn_timeouts_total") or 0.0
    clock.now = LATER
    assert games.run_out_clock(game_id, to_move(games, game_id)[0], first_legal)
    assert not games.run_out_clock(game_id, 2, first_legal)  # stale: not counted
    assert REGISTRY.get_sample_value("spinner_turn_timeouts_total") == before + 1


def test_a_move_that_lands_before_the_deadline_makes_its_clock_do_nothing(
        games: Games, game: tuple[str, dict[int, str]], clock: Clock) -> None:
    game_id, tokens = game
    version, seat = to_move(games, game_id)
    move = games.current_view(game_id, seat).own["legal_moves"][0]
    clock.now = "2024-05-01T12:00:09.999Z"
    games.move(game_id, seat, move, None, None)
    clock.now = LATER
    assert not games.run_out_clock(game_id, version, first_legal)
    assert ev.TURN_TIMED_OUT not in {e["type"] for e in games.events(game_id, None, 0)}


def test_a_clock_never_runs_out_early(
        games: Games, game: tuple[str, dict[int, str]], clock: Clock,
        monkeypatch: pytest.MonkeyPatch) -> None:
    game_id, _ = game
    version, _ = to_move(games, game_id)
    slept: list[float] = []

    def sleep(seconds: float) -> None:  # the job ran early: it waits, then the clock says so
        slept.append(seconds)
        clock.now = LATER
    monkeypatch.setattr("service.usecases.ai_turns.time.sleep", sleep)
    clock.now = "2024-05-01T12:00:09.000Z"
    assert games.run_out_clock(game_id, version, first_legal)
    assert slept and 0.9 < slept[0] <= 1.0
    assert games.events(game_id, None, version)[0]["at"] == LATER


def test_a_seat_that_left_reads_its_hand_cannot_move_nor_leave_again_and_an_ai_takes_over(
        games: Games, game: tuple[str, dict[int, str]], queue: ClockQueue) -> None:
    game_id, _ = game
    version, seat = to_move(games, game_id)
    shown = games.leave(game_id, seat, "greedy")
    player = shown.table.fields["players"][seat]
    assert (player["kind"], player["level"]) == ("ai", "greedy")
    assert shown.own["hand"] and shown.own["legal_moves"] == []
    assert shown.table.fields["turn_deadline"] is None
    assert ("turn", game_id, version + 1, None) in queue.calls  # its turn: the AI's now
    with pytest.raises(errors.SeatLeft):
        games.move(game_id, seat, {"action": "draw"}, None, None)
    with pytest.raises(errors.SeatLeft):
        games.leave(game_id, seat, "random")


def test_leaving_a_finished_match_is_refused(games: Games, clock: Clock) -> None:
    created = games.create(HUMANS, {"hands": 1, "opening": "draw"}, 7)
    game_id = created.game_id
    games.leave(game_id, 0, "random")
    games.leave(game_id, 1, "random")
    while (table := games.current_view(game_id, None).table).fields["status"] == "playing":
        assert games.ai_turn(game_id, table.version, first_legal)
    with pytest.raises(errors.OutOfTurn) as refused:
        games.leave(game_id, 0, "greedy")
    assert refused.value.extra["rule"] == "R24"
