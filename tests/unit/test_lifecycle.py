"""Turn clocks and leaving in the game model (API.md "Lifecycle"): the deadline folded from
the log, the timeout and its move, leaving, replay (R26) and the offline audit."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from service.game import events as ev
from service.game.audit import audit
from service.game.commands import create_game, make_move
from service.game.lifecycle import LifecycleError, leave, time_out
from service.game.state import GameState, replay
from service.game.views import view
from service.rules.errors import OutOfTurn
from service.rules.moves import Move
from service.rules.turns import legal_moves

from .positions import players, shuffles

START = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
CLOCK = {"hands": 1, "opening": "draw", "turn_seconds": 10, "timeouts_to_leave": 2}


def stamp(seconds: float) -> str:
    """The RFC 3339 time `seconds` after START, as the service's clock writes it."""
    moment = START + timedelta(seconds=seconds)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}Z"


def new_game(rules: dict[str, object] | None = None) -> tuple[GameState, list[ev.Event]]:
    """A two-human game created at START under `rules` (CLOCK by default)."""
    state, events = create_game(players(2), dict(rules or CLOCK), shuffles(40), stamp(0))
    return state, list(events)


def first_move(state: GameState):
    """The seat to move's first legal move."""
    assert state.turn is not None and state.hand is not None
    return legal_moves(state.hand, state.turn)[0]


def test_the_deadline_is_the_turns_first_event_time_plus_turn_seconds() -> None:
    state, _ = new_game()
    assert view(state, None)["turn_deadline"] == stamp(10)
    make_move(state, state.turn, first_move(state), shuffles(40), stamp(4.5))
    assert view(state, None)["turn_deadline"] == stamp(14.5)  # each turn has its own clock


def test_each_append_starts_the_clock_again_a_draw_and_another_seats_leave_too() -> None:
    """The deadline is the game's last event's time plus turn_seconds (openapi.yaml,
    `turn_deadline`): the seat's own draw (R16: still its turn) and another seat leaving
    start the seat's clock again."""
    state, _ = create_game(players(2), dict(CLOCK), shuffles(31), stamp(0))
    moved = 0
    while legal_moves(state.hand, state.turn) != [Move.parse("draw")]:  # seed 31: 43 plays
        moved += 1
        make_move(state, state.turn, first_move(state), shuffles(31), stamp(moved))
    drawer = state.turn
    make_move(state, drawer, Move.parse("draw"), shuffles(31), stamp(moved + 5))
    assert state.turn == drawer  # to play the drawn tile, or pass (R16)
    assert view(state, None)["turn_deadline"] == stamp(moved + 15)
    three, _ = create_game(players(3), dict(CLOCK), shuffles(40), stamp(0))
    other = next(seat for seat in range(3) if seat != three.turn)
    leave(three, other, "greedy", stamp(3))
    assert view(three, None)["turn_deadline"] == stamp(13)


def test_no_clock_without_turn_seconds_nor_for_an_ai_seat() -> None:
    state, _ = new_game({"hands": 1, "opening": "draw"})
    assert view(state, None)["turn_deadline"] is None
    state, _ = new_game()
    leave(state, state.turn, "greedy", stamp(1))
    assert view(state, None)["turn_deadline"] is None


def test_a_timeout_before_the_deadline_is_refused_and_records_nothing() -> None:
    state, events = new_game()
    with pytest.raises(LifecycleError):
        time_out(state, first_move(state), shuffles(40), stamp(9.999))
    assert state.version == len(events)


def test_a_timeout_records_turn_timed_out_then_the_move_at_the_same_time() -> None:
    state, _ = new_game()
    seat, move = state.turn, first_move(state)
    recorded = time_out(state, move, shuffles(40), stamp(10))
    assert recorded[0]["type"] == ev.TURN_TIMED_OUT and recorded[0]["seat"] == seat
    assert recorded[0]["data"] == {}
    assert recorded[1]["seat"] == seat and recorded[1]["type"] in (ev.TILE_PLAYED, ev.TILE_DRAWN,
                                                                   ev.PASSED)
    assert {e["at"] for e in recorded} == {stamp(10)}
    assert state.timeouts[seat] == 1


def test_timeouts_to_leave_consecutive_timeouts_hand_the_seat_to_random() -> None:
    state, _ = new_game()
    seat, at = state.turn, 0.0
    left: list[ev.Event] = []
    while not left:
        if state.turn == seat:
            recorded = time_out(state, first_move(state), shuffles(40), stamp(at := at + 10))
            left = [e for e in recorded if e["type"] == ev.SEAT_LEFT]
        else:
            make_move(state, state.turn, first_move(state), shuffles(40), stamp(at := at + 1))
    assert left == [{**left[0], "seat": seat, "data": {"level": "random"}}]
    assert state.timeouts[seat] == 2
    assert view(state, None)["players"][seat]["kind"] == "ai"
    assert view(state, None)["players"][seat]["level"] == "random"


def test_a_seats_own_move_ends_its_run_of_timeouts() -> None:
    state, _ = new_game()
    seat, at = state.turn, 10.0
    time_out(state, first_move(state), shuffles(40), stamp(at))
    while state.turn != seat:
        make_move(state, state.turn, first_move(state), shuffles(40), stamp(at := at + 1))
    make_move(state, seat, first_move(state), shuffles(40), stamp(at + 1))
    assert state.timeouts[seat] == 0


def test_leaving_is_refused_once_left_and_once_the_match_has_ended() -> None:
    state, _ = new_game()
    leave(state, 1, "expert", stamp(1))
    with pytest.raises(LifecycleError):
        leave(state, 1, "greedy", stamp(2))
    state.status = "finished"
    with pytest.raises(OutOfTurn):
        leave(state, 0, "greedy", stamp(3))


def clocked_match(seed: int) -> list[ev.Event]:
    """A whole clocked match: seat 1 leaves at once, seat 0 moves or times out at random."""
    state, events = new_game({**CLOCK, "timeouts_to_leave": 3})
    rng, at = random.Random(seed), 0.0
    events += leave(state, 1, "greedy", stamp(at := at + 1))
    while state.status == "playing":
        if state.turn == 0 and state.players[0]["kind"] == "human" and rng.random() < 0.4:
            events += time_out(state, first_move(state), shuffles(40), stamp(at := at + 10))
        else:
            move = rng.choice(legal_moves(state.hand, state.turn))
            events += make_move(state, state.turn, move, shuffles(40), stamp(at := at + 1))
    return events


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_R26_replay_and_the_audit_accept_logs_with_timeouts_and_leaving(seed: int) -> None:
    events = clocked_match(seed)
    types = {e["type"] for e in events}
    assert {ev.TURN_TIMED_OUT, ev.SEAT_LEFT} <= types
    final = replay(events)
    assert final.status == "finished" and final.players[1]["kind"] == "ai"
    for cut in (i for i, e in enumerate(events) if e["type"] == ev.TURN_TIMED_OUT):
        snapshot = GameState.from_dict(replay(events[:cut]).to_dict())  # as a snapshot is kept
        assert replay(events[cut:], snapshot).to_dict() == final.to_dict()
    assert audit(events) is None


def test_the_audit_refuses_a_timeout_before_its_deadline() -> None:
    events = clocked_match(1)
    early = next(i for i, e in enumerate(events) if e["type"] == ev.TURN_TIMED_OUT)
    before = events[early - 1]["at"]
    forged = [dict(e) for e in events]
    for event in forged[early:]:
        event["at"] = before if event["at"] == events[early]["at"] else event["at"]
    chained, prev = [], ev.GENESIS
    for event in forged:
        sealed = ev.seal(event, event["seq"], event["at"], prev)
        chained.append(sealed)
        prev = sealed["hash"]
    finding = audit(chained)
    assert finding is not None and finding.seq == early + 1
    assert "turn_timed_out" in finding.reason


def test_the_audit_refuses_a_seat_left_of_a_seat_that_had_left() -> None:
    events = clocked_match(2)
    at = next(i for i, e in enumerate(events) if e["type"] == ev.SEAT_LEFT)
    forged = [*events[:at + 1], {**events[at], "seq": at + 2}, *events[at + 1:]]
    chained, prev = [], ev.GENESIS
    for seq, event in enumerate(forged, start=1):
        sealed = ev.seal(event, seq, event["at"], prev)
        chained.append(sealed)
        prev = sealed["hash"]
    finding = audit(chained)
    assert finding is not None and finding.seq == at + 2


def test_no_move_nor_deadline_is_shown_where_the_servers_own_event_comes_next() -> None:
    """At the version of `turn_timed_out` the move made for the seat follows in the same
    append, and in an R9 search every draw is the server's: no seat is offered a move
    there, and no clock runs ("while a human seat is to move")."""
    state, events = new_game()
    seat = state.turn
    events += time_out(state, first_move(state), shuffles(40), stamp(10))
    timed_out = replay(events[:-1])
    assert timed_out.version == len(events) - 1 and timed_out.turn == seat
    assert view(timed_out, seat)["legal_moves"] == []
    assert view(timed_out, seat)["turn_deadline"] is None
    assert view(replay(events), None)["turn_deadline"] == stamp(20)  # the next seat's clock
    created = next(events for _, events in (create_game(
        players(2), dict(CLOCK), shuffles(seed), stamp(0)) for seed in range(200))
        if events[-1]["data"].get("reason") == "search" and events[-2]["type"] == ev.TILE_DRAWN)
    mid_search = replay(created[:-1])  # the last draw of the search is still to come
    assert mid_search.turn is not None
    assert view(mid_search, mid_search.turn)["turn_deadline"] is None
    assert view(mid_search, mid_search.turn)["legal_moves"] == []
    assert view(replay(created), None)["turn_deadline"] == stamp(10)  # the opener's clock
