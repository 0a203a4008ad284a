"""The rule sets a game may play, one line each: what creates, moves and deals a match.

A variant's rules live in a folder of their own under `service/rules/` and its commands and
fold under `service/game/`; this table is the one place that names them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, NamedTuple

from service.game import commands, state
from service.game import events as ev
from service.game.allfives import commands as fives
from service.game.allfives import state as fives_state
from service.rules.allfives.tiles import FIVES_SET
from service.rules.allfives.turns import legal_moves as fives_legal_moves
from service.rules.moves import Move
from service.rules.tiles import TILES, Tile
from service.rules.turns import legal_moves

DEFAULT: Final = state.SPINNER
ALL_FIVES: Final = "all_fives"


class Variant(NamedTuple):
    """One rule set: its tiles, the commands that create a match and make a move, the
    moves a seat may make in a hand, and its state's fold (one event; events into a state
    or a fresh one) and rebuilding from a snapshot (`to_dict` output)."""

    tiles: tuple[Tile, ...]
    create_game: Callable[..., tuple[Any, list[ev.Event]]]
    make_move: Callable[..., list[ev.Event]]
    legal_moves: Callable[[Any, int], list[Move]]
    evolve: Callable[[Any, ev.Event], Any]
    replay: Callable[[Iterable[ev.Event], Any], Any]
    from_dict: Callable[[dict[str, Any]], Any]


VARIANTS: Final[Mapping[str, Variant]] = {  # RULES.md, ALLFIVES.md
    DEFAULT: Variant(TILES, commands.create_game, commands.make_move, legal_moves,
                     state.evolve, state.replay, state.GameState.from_dict),
    ALL_FIVES: Variant(FIVES_SET, fives.create_game, fives.make_move, fives_legal_moves,
                       fives_state.evolve, fives_state.replay,
                       fives_state.FivesState.from_dict),
}


def variant_of(rules: Mapping[str, Any]) -> Variant:
    """Return the variant a game's `rules` name (Spinner when they name none)."""
    return VARIANTS[rules.get("variant", DEFAULT)]


def replay_log(events: Sequence[ev.Event], match: state.Match[Any] | None = None
               ) -> state.Match[Any]:
    """Fold `events` into `match`, or into a fresh match of the variant the log's first
    event (its `game_created`) names: the same events, the same state (R26)."""
    rules = match.rules if match is not None else events[0]["data"]["rules"]
    folded: state.Match[Any] = variant_of(rules).replay(events, match)
    return folded


def restore(data: dict[str, Any]) -> state.Match[Any]:
    """Rebuild a state of either variant from its `to_dict` output (a snapshot)."""
    restored: state.Match[Any] = variant_of(data["rules"]).from_dict(data)
    return restored
