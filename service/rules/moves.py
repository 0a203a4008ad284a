"""Moves a seat can make (R16), with a text form that logs, errors and tests share."""

from __future__ import annotations

from typing import Any, NamedTuple

from service.rules.errors import MalformedMove
from service.rules.tiles import Tile

ACTIONS = ("play", "draw", "pass")


class Move(NamedTuple):
    """A play (tile, end id or None for the opening double, exposed value), a draw or a pass."""

    action: str
    tile: Tile | None = None
    end: str | None = None
    expose: int | None = None

    @staticmethod
    def from_dict(body: dict[str, Any]) -> Move:
        """Build a move from its request form, or raise MalformedMove naming the rule."""
        action = body.get("action")
        if action not in ACTIONS:
            raise MalformedMove("R16", f"action {action!r} is not one of play, draw, pass")
        if action != "play":
            return DRAW if action == "draw" else PASS
        expose = body.get("expose")
        if expose is not None and (type(expose) is not int or not 0 <= expose <= 9):
            raise MalformedMove("R14", f"expose {expose!r} is not a number 0-9")
        return Move("play", Tile.parse(body.get("tile")), body.get("end"), expose)

    def to_dict(self) -> dict[str, Any]:
        """Return the request form, e.g. `{"action": "draw"}`."""
        if self.action != "play":
            return {"action": self.action}
        return {"action": "play", "tile": str(self.tile), "end": self.end, "expose": self.expose}

    def __str__(self) -> str:
        if self.action != "play":
            return self.action
        return f"play {self.tile} on {self.end or 'the centre'} leaving {self.expose}"


DRAW = Move("draw")
PASS = Move("pass")
