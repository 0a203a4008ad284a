"""What the use cases show of a game: the table every seat shares and a seat's own part."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.game.state import Match
from service.game.views import own, table
from service.usecases.context import Context


class Table:
    """What every seat and spectator sees of a game at one version (`fields`, read only),
    built once a version and kept (`Context.tables`)."""

    __slots__ = ("version", "fields")

    def __init__(self, version: int, fields: dict[str, Any]) -> None:
        self.version, self.fields = version, fields

    @classmethod
    def of(cls, game_id: str, state: Match[Any]) -> Table:
        """Return the table of `state`, named for its game."""
        return cls(state.version, {"game_id": game_id, **table(state)})


@dataclass(frozen=True, slots=True)
class View:
    """A game as one seat (or a spectator) sees it: the shared table and the seat's own part
    (its tiles and legal moves; empty for a spectator)."""

    table: Table
    own: dict[str, Any]


def view_of(ctx: Context, game_id: str, state: Match[Any], seat: int | None) -> View:
    """Return `state` as `seat` sees it; the table is built once a version. A seat that has
    left (an AI's now) still sees its hand, but no legal move: it can make none (API.md)."""
    shared = ctx.tables.get(game_id, state.version, lambda: Table.of(game_id, state))
    mine = own(state, seat)
    if seat is not None and state.players[seat]["kind"] != "human":
        mine["legal_moves"] = []
    return View(shared, mine)
