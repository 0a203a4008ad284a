"""AI turns: queued when an AI seat is to move, queued again when lost, and taken."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from service.game import events as ev
from service.game.state import Match
from service.rules.moves import Move
from service.usecases import clocks
from service.usecases.ai_caps import parse_turn, turn_name
from service.usecases.clients import Client
from service.usecases.context import Context
from service.usecases.loading import keep, load
from service.usecases.ports import ConcurrencyError, StoreUnavailable
from service.usecases.recording import record_move
from service.usecases.seats import meta

Chooser = Callable[[Match[Any], int, list[ev.Event], float], Move]
"""Picks a seat's move from the state, the hand's log and the seconds left before the move
may be appended (its thinking time); a strategy sees only its view."""
Pace = Callable[[Match[Any], int], float]
"""The seconds after a seat's turn began before its move may reach the log."""
log = logging.getLogger("spinner.turns")
FAST, EXPERT = "fast", "expert"
"""The queue lanes: `greedy` and `random` turns take a few milliseconds, `expert` ones search."""


def ai_to_move(state: Match[Any]) -> bool:
    """Whether an AI seat is the one to move."""
    turn = state.turn
    return turn is not None and state.players[turn]["kind"] == "ai"


def lane(state: Match[Any]) -> str:
    """Return the lane of the AI turn due now: EXPERT for an expert seat, else FAST."""
    assert state.turn is not None
    return EXPERT if state.players[state.turn].get("level", EXPERT) == EXPERT else FAST


def client_of(ctx: Context, game_id: str) -> Client | None:
    """Return the client whose creation of the game its AI work counts against."""
    found = meta(ctx, game_id)
    return None if found is None else found.client


def queue_due(ctx: Context, game_id: str, state: Match[Any]) -> None:
    """Queue the AI turn due at the state's version, if an AI seat is to move, or defer it
    while its client has as many AI turns queued as it may; stop counting a game that
    ended against its client's open AI games. It follows an append that landed, so it never
    fails: a turn it cannot queue is logged and counted, and the game's next read (`heal`)
    or the worker's sweep queues it. A human seat to move under a turn clock has its clock
    scheduled instead (a read heals one not scheduled)."""
    try:
        if not ai_to_move(state):
            clocks.schedule(ctx, game_id, state)
            client = client_of(ctx, game_id)
            if client is not None and state.status != "playing":
                ctx.caps.ledger.release_game(client, game_id)
            return
        if admit(ctx, game_id, state):
            ctx.queue.enqueue_turn(game_id, state.version, lane(state))
    except StoreUnavailable as error:
        log.warning("the AI turn of %s at %d was not queued (%s); a read heals it",
                    game_id, state.version, error)
        ctx.meter.turn_not_queued()
    except Exception:  # a bug, but the append landed: its answer must say so
        log.exception("the AI turn of %s at %d was not queued", game_id, state.version)
        ctx.meter.turn_not_queued()


def admit(ctx: Context, game_id: str, state: Match[Any]) -> bool:
    """Count the AI turn due now as queued for its game's client and return True, or, with
    the client's cap of queued turns reached, defer it and return False (counted once,
    however often it is asked)."""
    client = client_of(ctx, game_id)
    return client is None or ctx.caps.ledger.admit_turn(
        client, turn_name(game_id, state.version), ctx.caps.limits(client).turns)


def heal(ctx: Context, game_id: str, state: Match[Any]) -> None:
    """Queue the AI turn due now again if its job is lost (see TurnQueue.heal_turn). The
    turn counts against its client's cap first, as in `queue_due` (a read between the append
    and its `queue_due` must not queue a turn past the cap): a deferred turn has no job, and
    waits for its turn. A lost turn clock is scheduled again."""
    if not ai_to_move(state):
        clocks.heal(ctx, game_id, state)
        return
    try:
        if not admit(ctx, game_id, state):
            return
    except StoreUnavailable as error:  # the sweep or the next read heals it
        log.warning("could not count the AI turn of %s at %d (%s)", game_id, state.version,
                    error)
        return
    ctx.queue.heal_turn(game_id, state.version, lane(state))


def drain(ctx: Context, client: Client) -> int:
    """Queue the client's oldest deferred AI turns that fit under its cap now; return how
    many. A turn the game has moved past (none should) is done at once. A worker that dies
    between counting a turn and queueing it leaves it to the game's next read, as one that
    dies between an append and its `queue_due`."""
    turns = ctx.caps.ledger.claim_deferred(client, ctx.caps.limits(client).turns)
    for turn in turns:
        game_id, version = parse_turn(turn)
        state = load(ctx, game_id)
        keep(ctx, game_id, state)
        if state.version == version and ai_to_move(state):
            ctx.queue.enqueue_turn(game_id, version, lane(state))
        else:
            ctx.caps.ledger.finish_turn(client, turn)
    return len(turns)


def drain_all(ctx: Context) -> int:
    """Queue every client's deferred AI turns that fit under its cap (the workers' sweep:
    nothing deferred waits on a job that never finishes); return how many."""
    return sum(drain(ctx, client) for client in ctx.caps.ledger.deferring())


def take_turn(ctx: Context, game_id: str, version: int, choose: Chooser,
              pace: Pace | None = None) -> bool:
    """Play the AI seat's turn due at `version`; False if the game has moved on. Either way
    the turn no longer counts as queued for its client, whose oldest deferred turns are
    queued in its place, before the game's next turn."""
    played = play(ctx, game_id, version, choose, pace)
    client = client_of(ctx, game_id)
    if client is not None:
        ctx.caps.ledger.finish_turn(client, turn_name(game_id, version))
        drain(ctx, client)
    if played is None:
        return False
    queue_due(ctx, game_id, played)
    keep(ctx, game_id, played)
    return True


def play(ctx: Context, game_id: str, version: int, choose: Chooser,
         pace: Pace | None = None) -> Match[Any] | None:
    """Append the AI seat's move due at `version` and return the state after it; None if
    the game has moved on. The move is appended no sooner than `pace` seconds after the turn
    began, however fast it was chosen or however late the job ran, so its time says nothing
    of the seat's hand. A game that moved on has its turn due now healed: the job that
    played this turn may have died before it queued the next (its Redis went away) and run
    again; else a game nobody reads would wait for good."""
    state = load(ctx, game_id)
    if state.version != version or not ai_to_move(state):
        heal(ctx, game_id, state)
        keep(ctx, game_id, state)
        return None
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
        return None
    return state


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
