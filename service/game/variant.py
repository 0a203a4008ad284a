"""What the service asks of a rule set: the record each variant fills in and the registry
(`variants.py`) lists. Plain data and functions: no framework, no I/O."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from service.game import events as ev
from service.rules.moves import Move
from service.rules.tiles import Tile


class Option(NamedTuple):
    """One option a creation's `rules` may set, as plain data (the API builds its field
    from it): its name, its default, the rule that sets it and the sentence a refused value
    gets before that rule; `choices` for a text option, else an integer from `low` to
    `high` in steps of `step`."""

    name: str
    default: int | str
    rule: str
    says: str
    choices: tuple[str, ...] = ()
    low: int = 0
    high: int = 0
    step: int = 1


class Variant(NamedTuple):
    """One rule set: its name, its options, the players it seats (`seats`, a range, and the
    rule that says so, worded for `a_game`), its tiles, the commands that create a match and
    make a move, the moves a seat may make in a hand, its state's fold (one event; events
    into a state or a fresh one) and rebuilding from a snapshot (`to_dict` output); the
    event type, if any, that draws from the deck of hand 0 before the first deal
    (`leader_draw`, whose `tiles` it names); and its AI's entry point, `module:function`,
    which the workers import (the game layer may not import them)."""

    name: str
    options: tuple[Option, ...]
    seats: range
    seats_rule: str
    a_game: str
    tiles: tuple[Tile, ...]
    create_game: Callable[..., tuple[Any, list[ev.Event]]]
    make_move: Callable[..., list[ev.Event]]
    legal_moves: Callable[[Any, int], list[Move]]
    evolve: Callable[[Any, ev.Event], Any]
    replay: Callable[[Iterable[ev.Event], Any], Any]
    from_dict: Callable[[dict[str, Any]], Any]
    leader_draw: str | None
    ai: str
