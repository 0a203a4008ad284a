"""A seat's move: decided where it arrived, honouring If-Match and an Idempotency-Key."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from service.game.state import Match
from service.usecases import idempotency
from service.usecases.ai_turns import queue_due
from service.usecases.context import Context
from service.usecases.errors import RaceLost, Refusal, SeatLeft, VersionMismatch
from service.usecases.loading import keep, load
from service.usecases.ports import ConcurrencyError, KeyClaim, KeyTaken
from service.usecases.reading import view_at
from service.usecases.recording import record_move
from service.usecases.seat_views import View, view_of


def move(ctx: Context, game_id: str, seat: int, body: dict[str, Any],
         if_match: frozenset[int] | None, key: str | None) -> View:
    """Apply a seat's move (honouring If-Match and Idempotency-Key); return the new view."""
    if key is None:
        return _move(ctx, game_id, seat, body, if_match, None)
    claim = idempotency.new_claim(game_id, seat, key, idempotency.body_hash(body))
    with _released_on_failure(ctx, claim):
        return _claimed_move(ctx, game_id, seat, body, if_match, claim)


def refuse_move(ctx: Context, game_id: str, seat: int, key: str, digest: str,
                refusal: Refusal) -> View:
    """Answer a move whose body could not be read but which names an Idempotency-Key: as the
    key's first answer if it has one (KeyPending, KeyReused for another body), else by
    raising `refusal`, kept as the key's answer; `digest` is the body's hash."""
    claim = idempotency.new_claim(game_id, seat, key, digest)
    with _released_on_failure(ctx, claim):
        answered = _first_answer(ctx, game_id, seat, claim)
        return _refused(ctx, game_id, seat, claim, refusal) if answered is None else answered


def _first_answer(ctx: Context, game_id: str, seat: int, claim: KeyClaim) -> View | None:
    """Claim the key (None), or return (or raise) the answer it gave first."""
    version = idempotency.claim(ctx.store, claim)
    return None if version is None else view_at(ctx, game_id, seat, version)


@contextmanager
def _released_on_failure(ctx: Context, claim: KeyClaim) -> Iterator[None]:
    """Release the key if it is pending for `claim` when the request fails, as by a 503 (a
    claim whose reply was lost may have been made), but not if it is refused: a refusal is
    the key's answer, kept or (from another claim) given."""
    try:
        yield
    except Refusal:
        raise
    except BaseException:
        ctx.store.idempotency_abort(claim)
        raise


def _claimed_move(ctx: Context, game_id: str, seat: int, body: dict[str, Any],
                  if_match: frozenset[int] | None, claim: KeyClaim) -> View:
    """Claim the key and make the move under it, or answer as the key did first. A refusal
    is kept as the key's answer; if another request took the key over meanwhile (this
    process was thought dead), the move is not appended and the answer is the one the key's
    record gives now."""
    answered = _first_answer(ctx, game_id, seat, claim)
    if answered is not None:
        return answered
    try:
        return _move(ctx, game_id, seat, body, if_match, claim)
    except Refusal as refusal:
        return _refused(ctx, game_id, seat, claim, refusal)
    except KeyTaken as taken:
        version = idempotency.answer(taken.record, claim.body_hash)
        return view_at(ctx, game_id, seat, version)


def _refused(ctx: Context, game_id: str, seat: int, claim: KeyClaim,
             refusal: Refusal) -> View:
    """Raise `refusal`, kept as the key's answer; or, if another process answered the key
    meanwhile (it took the key over from this one, thought dead), answer as it did."""
    version = idempotency.refused(ctx.store, claim, refusal)
    if version is None:
        raise refusal
    return view_at(ctx, game_id, seat, version)


def _move(ctx: Context, game_id: str, seat: int, body: dict[str, Any],
          if_match: frozenset[int] | None, claim: KeyClaim | None) -> View:
    """Decide the move where it arrived: on the log as it is now or, with If-Match, on the
    kept state first, if at that version (the append's version check catches a kept state
    behind the log). A move another one beat to the append lands nowhere (API.md: two
    moves that race for the same seat and version never both land): VersionMismatch with
    If-Match, else RaceLost, even if the seat is to move again by then."""
    kept = ctx.states.take(game_id) if if_match is not None else None
    if kept is not None:
        try:
            return _try_move(ctx, game_id, kept.clone(), seat, body, if_match, claim)
        except (Refusal, ConcurrencyError):
            keep(ctx, game_id, kept)  # right at its version: `load` catches it up
    try:
        return _try_move(ctx, game_id, load(ctx, game_id), seat, body, if_match, claim)
    except ConcurrencyError as race:
        ctx.meter.append_conflict()
        if if_match is not None:
            raise VersionMismatch("another move landed first",
                                  version=race.current_version) from race
        raise RaceLost("another move of this seat landed first",
                       version=race.current_version) from race


def _try_move(ctx: Context, game_id: str, state: Match[Any], seat: int, body: dict[str, Any],
              if_match: frozenset[int] | None, claim: KeyClaim | None) -> View:
    """Check If-Match (the versions it names), decide and append the move on `state`, queue
    any AI turn; return the seat's new view."""
    if if_match is not None and state.version not in if_match:
        raise VersionMismatch(f"the game is at version {state.version}", version=state.version)
    if state.players[seat]["kind"] != "human":  # API.md "Leaving"
        raise SeatLeft(f"seat {seat} has left the match: an AI moves for it")
    record_move(ctx, game_id, state, seat, body, claim)
    queue_due(ctx, game_id, state)
    shown = view_of(ctx, game_id, state, seat)
    keep(ctx, game_id, state)
    return shown
