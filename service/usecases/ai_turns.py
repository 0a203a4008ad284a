"""AI turns: queued when an AI seat is to move, queued again when lost, and taken."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime

from service.game import events as ev
from service.game.state import GameState
from service.rules.moves import Move
from service.usecases.context import Context
from service.usecases.loading import keep, load
from service.usecases.ports import ConcurrencyError, StoreUnavailable
from service.usecases.recording import record_move

Chooser = Callable[[GameState, int, list[ev.Event], float], Move]
"""Picks a seat's move from the state, the hand's log and the seconds left before the move
may be appended (its thinking time); a strategy sees only its view."""
Pace = Callable[[GameState, int], float]
"""The seconds after a seat's turn began before its move may reach the log."""
log = logging.getLogger("spinner.turns")


def ai_to_move(state: GameState) -> bool:
    """Whether an AI seat is the one to move."""
    turn = state.turn
    return turn is not None and state.players[turn]["kind"] == "ai"


def queue_due(ctx: Context, game_id: str, state: GameState) -> None:
    """Queue the AI turn due at the state's version, if an AI seat is to move. It follows an
    append that landed, so it never fails: a turn it cannot queue is logged and counted, and
    the game's next read (`heal`) or the worker's sweep queues it."""
    if not ai_to_move(state):
        return
    try:
        ctx.queue.enqueue_turn(game_id, state.version)
    except StoreUnavailable as error:
        log.warning("the AI turn of %s at %d was not queued (%s); a read heals it",
                    game_id, state.version, error)
        ctx.meter.turn_not_queued()
    except Exception:  # a bug, but the append landed: its answer must say so
        log.exception("the AI turn of %s at %d was not queued", game_id, state.version)
        ctx.meter.turn_not_queued()


def heal(ctx: Context, game_id: str, state: GameState) -> None:
    """Queue the AI turn due now again if its job is lost (see TurnQueue.heal_turn)."""
    if ai_to_move(state):
        ctx.queue.heal_turn(game_id, state.version)


def take_turn(ctx: Context, game_id: str, version: int, choose: Chooser,
              pace: Pace | None = None) -> bool:
    """Play the AI seat's turn due at `version`; False if the game has moved on. The move is
    appended no sooner than `pace` seconds after the turn began, however fast it was chosen
    or however late the job ran, so its time says nothing of the seat's hand."""
    state = load(ctx, game_id)
    if state.version != version or not ai_to_move(state):
        keep(ctx, game_id, state)
        return False
    seat = state.turn
    assert seat is not None
    hand_log = ctx.store.read(game_id, after=state.hand_seq - 1)
    due = began(hand_log, version) + (0.0 if pace is None else pace(state, seat))
    move = choose(state, seat, hand_log, due - now(ctx))
    sleep_until(ctx, due)
    try:
        record_move(ctx, game_id, state, seat, move.to_dict(), None)
    except ConcurrencyError:
        ctx.meter.append_conflict()
        return False
    queue_due(ctx, game_id, state)
    keep(ctx, game_id, state)
    return True


def began(hand_log: list[ev.Event], version: int) -> float:
    """When the turn due at `version` began: the Unix time of the log's event `version`."""
    event = next(e for e in reversed(hand_log) if e["seq"] == version)
    return instant(event["at"])


def instant(at: str) -> float:
    """Return an event's RFC 3339 `at` as a Unix time."""
    return datetime.fromisoformat(at).timestamp()


def now(ctx: Context) -> float:
    """Return the context's clock as a Unix time."""
    return instant(ctx.clock())


def sleep_until(ctx: Context, due: float) -> None:
    """Sleep until the context's clock reads `due` (a clock to the millisecond reads behind
    the true time, so the clock of an append after this reads `due` or later)."""
    time.sleep(max(0.0, due - now(ctx)))
