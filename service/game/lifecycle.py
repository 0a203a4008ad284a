"""Turn clocks and leaving (API.md "Lifecycle"): a human seat's deadline, the move made for
it when the deadline passes, and a seat handed to an AI. A deadline is a fact of the log, the
`at` of the event that began the turn plus `turn_seconds`: no clock is read here (R26)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Final

from service.game import events as ev
from service.game.commands import Shuffle
from service.game.state import Match
from service.game.variants import variant_of
from service.rules.errors import OutOfTurn
from service.rules.moves import Move

TIMEOUTS_TO_LEAVE: Final = 3
"""Consecutive timeouts after which a seat leaves, when the rules name no number."""
TIMEOUT_LEVEL: Final = "random"
"""The AI level that moves for a timed-out seat, and takes over a seat that timed out
`timeouts_to_leave` times in a row."""


LEVELS: Final = ("random", "greedy", "expert")
"""The AI levels a seat may be handed to."""


class LifecycleError(ValueError):
    """A timeout or a leave that the log does not allow: no clock running out, no such seat
    to leave."""


def deadline(state: Match[Any]) -> datetime | None:
    """When the human seat to move is timed out, or None: no clock in the rules, no human
    seat to move (none while the server's own event comes next, as in an R9 search), or no
    recorded time (an unsealed simulation)."""
    seconds, turn = state.rules.get("turn_seconds"), state.turn
    if not seconds or turn is None or state.turn_at is None or state.awaiting_server:
        return None
    if state.players[turn]["kind"] != "human":
        return None
    return datetime.fromisoformat(state.turn_at) + timedelta(seconds=seconds)


def deadline_text(state: Match[Any]) -> str | None:
    """The state's `turn_deadline`: RFC 3339 in UTC to the millisecond, as events' `at`."""
    due = deadline(state)
    if due is None:
        return None
    due = due.astimezone(UTC)
    return f"{due:%Y-%m-%dT%H:%M:%S}.{due.microsecond // 1000:03d}Z"


def _recorded(state: Match[Any], at: str, type_: str, seat: int, data: dict[str, Any]
              ) -> ev.Event:
    """Seal an event at `at` after the state's last, fold it in through its variant's fold
    and return it."""
    event = ev.seal({"type": type_, "seat": seat, "data": data}, state.version + 1, at,
                    state.last_hash)
    variant_of(state.rules).evolve(state, event)
    return event


def time_out(state: Match[Any], move: Move, shuffle: Shuffle, at: str) -> list[ev.Event]:
    """Record, at `at` (no sooner than the deadline), the timeout of the seat to move, then
    `move` made for it (by its variant's rules) and, after its `timeouts_to_leave`-th
    timeout in a row, its leaving to the `random` level; return the new events."""
    due, seat = deadline(state), state.turn
    if due is None or seat is None:
        raise LifecycleError("no turn clock is running")
    if datetime.fromisoformat(at) < due:
        raise LifecycleError(f"the turn's deadline {deadline_text(state)} has not passed")
    events = [_recorded(state, at, ev.TURN_TIMED_OUT, seat, {})]
    events += variant_of(state.rules).make_move(state, seat, move, shuffle, at)
    limit = state.rules.get("timeouts_to_leave", TIMEOUTS_TO_LEAVE)
    if state.status == "playing" and state.timeouts[seat] >= limit:
        events += leave(state, seat, TIMEOUT_LEVEL, at)
    return events


def leave(state: Match[Any], seat: int, level: str, at: str) -> list[ev.Event]:
    """Record `seat` handed to an AI of `level` for the rest of the match; return the event."""
    if state.status != "playing":
        raise OutOfTurn("R24", "the match has ended: no seat can leave it")
    if state.players[seat]["kind"] != "human":
        raise LifecycleError(f"seat {seat} has already left the match")
    if level not in LEVELS:
        raise LifecycleError(f"{level!r} is no AI level")
    return [_recorded(state, at, ev.SEAT_LEFT, seat, {"level": level})]
