"""AI turns: queued when an AI seat is to move, queued again when lost, and taken."""

from __future__ import annotations

import logging
from collections.abc import Callable

from service.game import events as ev
from service.game.state import GameState
from service.rules.moves import Move
from service.usecases.context import Context
from service.usecases.loading import keep, load
from service.usecases.ports import ConcurrencyError, StoreUnavailable
from service.usecases.recording import record_move

Chooser = Callable[[GameState, int, list[ev.Event]], Move]
"""Picks a seat's move from the state and the hand's log; a strategy sees only its view."""
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


def take_turn(ctx: Context, game_id: str, version: int, choose: Chooser) -> bool:
    """Play the AI seat's turn due at `version`; False if the game has moved on."""
    state = load(ctx, game_id)
    if state.version != version or not ai_to_move(state):
        keep(ctx, game_id, state)
        return False
    seat = state.turn
    assert seat is not None
    hand_log = ctx.store.read(game_id, after=state.hand_seq - 1)
    try:
        record_move(ctx, game_id, state, seat, choose(state, seat, hand_log).to_dict(), None)
    except ConcurrencyError:
        ctx.meter.append_conflict()
        return False
    queue_due(ctx, game_id, state)
    keep(ctx, game_id, state)
    return True
