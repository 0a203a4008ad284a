"""Following a game as it is played: its events as they come, each batch of them followed
by where the game stands (its version, whose turn, its status), redacted for the caller."""

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


class Turn(NamedTuple):
    """Where the game stands after the events sent so far: public to every caller (R25)."""

    version: int
    turn: int | None
    status: str

    def to_dict(self) -> dict[str, int | str | None]:
        """Return it in its answer's shape (StreamTurnOut: version, turn, status)."""
        return {"version": self.version, "turn": self.turn, "status": self.status}


Followed = Iterator[ev.Event | Turn | None]
"""What `follow` yields: events, a Turn after each batch, None when none came for a while."""


def follow(ctx: Context, game_id: str, seat: int | None, resume: int,
           quiet_s: float) -> Followed | None:
    """Return the events after `resume` (at most the version now) as `seat` may see them
    (R25), as they come, until the match ends, each batch (one append or more, as they
    arrived) followed by the Turn it leaves; a Turn first if nothing is left to send yet;
    None each time none came for `quiet_s`. None instead of them all once the match has
    ended with nothing left after `resume`."""
    state = load(ctx, game_id)
    heal(ctx, game_id, state)
    standing = state.clone()  # this stream's own fold, kept up with the events it sends
    keep(ctx, game_id, state)
    after = min(resume, standing.version)  # a point beyond the log would wait past its end
    if standing.status == "finished":  # the whole log is public now
        return None if after >= standing.version else _rest_of_log(ctx, game_id, after)
    return _as_they_come(ctx, game_id, seat, after, standing, int(quiet_s * 1000))


def turn_of(state: Match[Any]) -> Turn:
    """Return where `state` stands."""
    return Turn(state.version, state.turn, state.status)


def _rest_of_log(ctx: Context, game_id: str, after: int) -> Followed:
    events = ctx.store.read(game_id, after)
    yield from events
    yield Turn(events[-1]["seq"], None, "finished")


def _as_they_come(ctx: Context, game_id: str, seat: int | None, after: int,
                  standing: Match[Any], quiet_ms: int) -> Followed:
    """The events as they are appended, each batch followed by its Turn (`standing`, kept
    up with every event); when none came for `quiet_ms`, a lost AI turn is re-queued
    (nothing else may read the game to notice) and None is yielded."""
    evolve = variant_of(standing.rules).evolve
    if after == standing.version:
        yield turn_of(standing)
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
            yield turn_of(standing)
