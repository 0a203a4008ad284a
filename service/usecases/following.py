"""Following a game as it is played: its events as they come, each batch of them followed
by where the game stands (its version, whose turn, its status) and, when asked, the
caller's whole state at that version, redacted for the caller (R25)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from service.game import events as ev
from service.game.state import Match
from service.game.variants import variant_of
from service.game.views import redact
from service.usecases.ai_turns import heal
from service.usecases.context import Context
from service.usecases.loading import keep, load
from service.usecases.reading import progress
from service.usecases.seat_views import View, view_of


class Turn(NamedTuple):
    """Where the game stands after the events sent so far: public to every caller (R25)."""

    version: int
    turn: int | None
    status: str

    def to_dict(self) -> dict[str, int | str | None]:
        """Return it in its answer's shape (StreamTurnOut: version, turn, status)."""
        return {"version": self.version, "turn": self.turn, "status": self.status}


Followed = Iterator[ev.Event | Turn | View | None]
"""What `follow` yields: events, a Turn after each batch (and, when asked, the caller's
View at that version), None when none came for a while."""


class Follower(NamedTuple):
    """Who follows a game, and how: the seat its events are redacted for (None: a
    spectator), and whether each Turn comes with the seat's View at that version."""

    game_id: str
    seat: int | None
    with_state: bool = False


def follow(ctx: Context, who: Follower, resume: int, quiet_s: float) -> Followed | None:
    """Return the events after `resume` (at most the version now) as `who.seat` may see them
    (R25), as they come, until the match ends, each batch (one append or more, as they
    arrived) followed by the Turn it leaves (and, `with_state`, the seat's View then); a
    Turn first if nothing is left to send yet; None each time none came for `quiet_s`.
    None instead of them all once the match has ended with nothing left after `resume`."""
    game_id = who.game_id
    state = load(ctx, game_id)
    heal(ctx, game_id, state)
    standing = state.clone()  # this stream's own fold, kept up with the events it sends
    keep(ctx, game_id, state)
    after = min(resume, standing.version)  # a point beyond the log would wait past its end
    if standing.status == "finished":  # the whole log is public now
        return None if after >= standing.version else _rest_of_log(ctx, who, after, standing)
    return _as_they_come(ctx, who, after, standing, int(quiet_s * 1000))


def turn_of(state: Match[Any]) -> Turn:
    """Return where `state` stands."""
    return Turn(state.version, state.turn, state.status)


def _standing(ctx: Context, who: Follower, state: Match[Any]) -> Iterator[Turn | View]:
    """Where `state` stands, then, if `who` asked for it, its View (as a GET answers it)."""
    yield turn_of(state)
    if who.with_state:
        yield view_of(ctx, who.game_id, state, who.seat)


def _rest_of_log(ctx: Context, who: Follower, after: int, finished: Match[Any]) -> Followed:
    yield from ctx.store.read(who.game_id, after)
    yield from _standing(ctx, who, finished)


def _as_they_come(ctx: Context, who: Follower, after: int, standing: Match[Any],
                  quiet_ms: int) -> Followed:
    """The events as they are appended, each batch followed by its Turn (`standing`, kept
    up with every event); when none came for `quiet_ms`, a lost AI turn is re-queued
    (nothing else may read the game to notice) and None is yielded."""
    game_id, seat = who.game_id, who.seat
    evolve = variant_of(standing.rules).evolve
    if after == standing.version:
        yield from _standing(ctx, who, standing)
    while standing.status == "playing":
        events = ctx.store.wait_for_events(game_id, after, quiet_ms)
        if not events:
            progress(ctx, game_id)
            yield None
        ended = any(event["type"] == ev.GAME_ENDED for event in events)
        for event in events:  # the append that ends the match is shown whole, as by `events`
            if event["seq"] > standing.version:
                evolve(standing, event)
            yield event if ended else redact(event, seat)
            after = event["seq"]
            if event["type"] == ev.GAME_ENDED:
                break
        if events:
            _share(ctx, game_id, standing)
            yield from _standing(ctx, who, standing)


def _share(ctx: Context, game_id: str, standing: Match[Any]) -> None:
    """Keep a copy of `standing` for this process's next request of the game, unless the
    state kept is as new: a move then finds its state at its If-Match version, without
    reading the events it missed."""
    kept = ctx.states.get(game_id)
    if kept is None or kept.version < standing.version:
        keep(ctx, game_id, standing.clone())
