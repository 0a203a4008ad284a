"""The rule sets a game may play, one line each: what creates, moves and deals a match.

A variant's rules live in a folder of their own under `service/rules/` and its commands and
fold under `service/game/`; this table is the one place that names them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, NamedTuple

from service.game import commands
from service.game import events as ev
from service.game.allfives import commands as fives
from service.rules.allfives.tiles import FIVES_SET
from service.rules.allfives.turns import legal_moves as fives_legal_moves
from service.rules.moves import Move
from service.rules.tiles import TILES, Tile
from service.rules.turns import legal_moves

DEFAULT: Final = "spinner"


class Variant(NamedTuple):
    """One rule set: its tiles, the commands that create a match and make a move, and the
    moves a seat may make in a hand."""

    tiles: tuple[Tile, ...]
    create_game: Callable[..., tuple[Any, list[ev.Event]]]
    make_move: Callable[..., list[ev.Event]]
    legal_moves: Callable[[Any, int], list[Move]]


VARIANTS: Final[Mapping[str, Variant]] = {  # RULES.md, ALLFIVES.md
    "spinner": Variant(TILES, commands.create_game, commands.make_move, legal_moves),
    "all_fives": Variant(FIVES_SET, fives.create_game, fives.make_move, fives_legal_moves),
}


def variant_of(rules: Mapping[str, Any]) -> Variant:
    """Return the variant a game's `rules` name (Spinner when they name none)."""
    return VARIANTS[rules.get("variant", DEFAULT)]
