"""An All Fives match and its fold: the same events as Spinner's, plus `leader_drawn`, with
the points of each play and of each hand's end added to the running totals (F15, F16)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from service.game import events as ev
from service.game.allfives.hand import FivesHand
from service.game.state import SHARED_FOLD, Match, acted, fold, no_hand, recorder
from service.rules.tiles import Tile, parse_tiles

LEADER_DRAWN: Final = "leader_drawn"
"""F4: the tile each seat drew to choose the first leader (`tiles`, by seat); public."""


class FivesState(Match[FivesHand]):
    """Everything the log says about one All Fives match; built only by `evolve`.

    Its fields are a Spinner `GameState`'s, so that what reads a state reads both.
    """

    __slots__ = ()

    @property
    def target(self) -> int:
        """The total that wins the match (F15)."""
        return int(self.rules["target"])

    @property
    def target_reached(self) -> bool:
        """Whether a total has reached the target, which ends the match (F15)."""
        return max(self.totals) >= self.target

    @property
    def awaiting_server(self) -> bool:
        """The hand's, or a play has reached the target: the match's end comes next (F15)."""
        return super().awaiting_server or (self.status == "playing" and self.target_reached)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FivesState:
        """Rebuild a state from `to_dict` output (a snapshot)."""
        return cls().restore(data, FivesHand.from_dict(data["hand"]) if data["hand"] else None)


def _leader_drawn(state: FivesState, seat: int | None, data: dict[str, Any]) -> None:
    """The draw is on the record; its outcome is the first `hand_started`'s leader (F4)."""


def _hand_started(state: FivesState, seat: int | None, data: dict[str, Any]) -> None:
    state.hand = FivesHand.deal(data["hand_number"], parse_tiles(data["deck"]), data["leader"],
                                state.seats)
    state.hand_seq = state.version + 1
    state.hand_over = False


def _tile_drawn(state: FivesState, seat: int | None, data: dict[str, Any]) -> None:
    assert seat is not None
    (state.hand or no_hand()).apply_draw(seat, Tile.parse(data["tile"]))
    acted(state, seat)


def _tile_played(state: FivesState, seat: int | None, data: dict[str, Any]) -> None:
    assert seat is not None
    (state.hand or no_hand()).apply_play(seat, Tile.parse(data["tile"]), data["end"],
                                         data["expose"], data["new_ends"])
    state.totals[seat] += data["points"]
    if state.timing_out is not None or state.timeouts[seat]:  # `acted` has work to do
        acted(state, seat)


def _passed(state: FivesState, seat: int | None, data: dict[str, Any]) -> None:
    assert seat is not None
    (state.hand or no_hand()).apply_pass(seat)
    acted(state, seat)


_APPLY: dict[str, Callable[[FivesState, int | None, dict[str, Any]], None]] = {
    **SHARED_FOLD, LEADER_DRAWN: _leader_drawn, ev.HAND_STARTED: _hand_started,
    ev.TILE_DRAWN: _tile_drawn, ev.TILE_PLAYED: _tile_played, ev.PASSED: _passed,
}


def evolve(state: FivesState, event: ev.Event) -> FivesState:
    """Apply one recorded event to the state and return it (one branch per event type)."""
    return fold(_APPLY, (event,), state)


record: Final = recorder(_APPLY)
"""All Fives' `record` (see `recorder`): the commands' fold of each event they decide."""


def replay(events: Iterable[ev.Event], state: FivesState | None = None) -> FivesState:
    """Fold `events` into `state` (a fresh match by default): the same events, the same state."""
    return fold(_APPLY, events, FivesState() if state is None else state)
