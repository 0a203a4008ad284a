"""Recording a move: decide it on the state, then append its events in one atomic step."""

from __future__ import annotations

from typing import Any

from service.game import events as ev
from service.game.commands import Shuffle
from service.game.fairness import Shuffled
from service.game.state import Match
from service.game.variants import variant_of
from service.game.views import own
from service.rules import errors as rule
from service.rules.moves import Move
from service.usecases import errors, idempotency, notifications
from service.usecases.context import Context
from service.usecases.ports import KeyClaim
from service.usecases.seats import require_game
from service.usecases.tokens import new_append_id

FIELDS = {"R2": "tile", "R14": "expose"}
"""The move field a malformed move's rule speaks of; any other rule, of the action."""


def record_move(ctx: Context, game_id: str, state: Match[Any], seat: int, body: dict[str, Any],
                claim: KeyClaim | None) -> None:
    """Decide `seat`'s move on `state` and append its events at the state's version, with a
    snapshot when a hand was dealt and, for a claimed key, its final record; then queue its
    notifications (webhooks)."""
    expected, moving_in = state.version, moved_in(state, seat)
    events = decide(ctx, game_id, state, seat, body)
    record = None if claim is None else (claim, idempotency.applied(claim.body_hash, state.version))
    append(ctx, game_id, expected, state, events, record, moving_in)


def append(ctx: Context, game_id: str, expected: int, state: Match[Any], events: list[ev.Event],
           record: tuple[KeyClaim, str] | None = None, moving_in: bool = False) -> None:
    """Append the events decided on the state at version `expected` (`state` is after them),
    with a snapshot when a hand was dealt and their notifications, in one step where the
    store keeps the notifier's outbox (else they are queued after it)."""
    dealt = any(e["type"] == ev.HAND_STARTED for e in events)
    snapshot = {"version": state.version, "state": state.to_dict()} if dealt else None
    sent = notifications.outgoing(ctx, game_id, state, events)
    marked = ctx.store.append(game_id, expected, events, idempotency=record, snapshot=snapshot,
                              append_id=new_append_id(), moved_in=moving_in, outbox=sent.entries)
    notifications.announce(ctx, game_id, state.version, sent, marked)


def moved_in(state: Match[Any], seat: int) -> bool:
    """Whether a move of `seat` keeps the game for good: a client's move (a human seat's),
    or any move of a game of AI seats only, which no client ever moves in."""
    kinds = [player["kind"] for player in state.players]
    return kinds[seat] == "human" or "human" not in kinds


def decide(ctx: Context, game_id: str, state: Match[Any], seat: int,
           body: dict[str, Any]) -> list[ev.Event]:
    """Apply the move to `state` by its variant's rules and return its events, or raise the
    refusal of its rule (an R-number, or an F-number for All Fives)."""
    try:
        return variant_of(state.rules).make_move(state, seat, Move.from_dict(body),
                                                 shuffle_of(ctx, game_id, state), ctx.clock())
    except rule.RuleError as error:
        raise refusal(error, state, seat) from error


def refusal(error: rule.RuleError, state: Match[Any], seat: int) -> errors.Refusal:
    """Return the refusal of a rule error: malformed, out of turn, or illegal (with the
    seat's legal moves)."""
    if isinstance(error, rule.MalformedMove):
        field = FIELDS.get(error.rule, "action")
        return errors.MalformedMove(error.detail,
                                    errors=[{"field": field, "message": error.detail}])
    if isinstance(error, rule.OutOfTurn):
        return errors.OutOfTurn(error.detail, rule=error.rule)
    return errors.IllegalMove(error.detail, rule=error.rule,
                              legal_moves=own(state, seat).get("legal_moves", []))


def shuffle_of(ctx: Context, game_id: str, state: Match[Any]) -> Shuffle:
    """Return the deck source of the game, of the variant `state` plays; its seed is read
    only when a hand is dealt."""
    tiles = variant_of(state.rules).tiles

    def shuffle(hand_number: int) -> Shuffled:
        seed = require_game(ctx, game_id).seed
        return ctx.dealer.shuffle(game_id, int(seed) if seed else None, tiles)(hand_number)
    return shuffle
