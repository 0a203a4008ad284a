"""Moves a seat can make (R16): the request form, and a text form logs and tests share."""

from __future__ import annotations

import re
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
            raise _not_a_value(expose)
        return Move("play", Tile.parse(body.get("tile")), body.get("end"), expose)

    def to_dict(self) -> dict[str, Any]:
        """Return the request form, e.g. `{"action": "draw"}`."""
        if self.action != "play":
            return {"action": self.action}
        return {"action": "play", "tile": str(self.tile), "end": self.end, "expose": self.expose}

    @staticmethod
    def parse(text: str) -> Move:
        """Read the text form: `draw`, `pass`, `9-9` or `S-S 9` (the opening, in the centre),
        `3-5 e1` (expose left to the rules), `3-S e1 7`; raise MalformedMove naming the rule."""
        if text in ACTIONS[1:]:
            return DRAW if text == "draw" else PASS
        words = text.split(" ") if isinstance(text, str) else []
        if not 1 <= len(words) <= 3 or not all(words) or "-" not in words[0]:
            raise MalformedMove("R16", f"{text!r} is not a move: write draw, pass or a play "
                                       "such as '3-S e1 7'")
        tile, rest, end = Tile.parse(words[0]), words[1:], None  # R2
        if len(rest) == 2 or (rest and not _NUMBER.fullmatch(rest[0])):
            end = rest.pop(0)
            if not _END.fullmatch(end):
                raise MalformedMove("R11", f"{end!r} is not an end id such as 'e1'")
        return Move("play", tile, end, _expose(rest[0]) if rest else None)

    def __str__(self) -> str:
        """The text form `Move.parse` reads, the expose written whenever it is known."""
        if self.action != "play":
            return self.action
        words = [str(self.tile), self.end, None if self.expose is None else str(self.expose)]
        return " ".join(w for w in words if w is not None)

    def __repr__(self) -> str:
        text = str(self)
        try:
            if Move.parse(text) == self:
                return f"Move.parse({text!r})"
        except MalformedMove:  # an end id or expose no hand gives: the fields, then
            pass
        return f"Move({self.action!r}, {self.tile!r}, {self.end!r}, {self.expose!r})"


DRAW = Move("draw")
PASS = Move("pass")
_END = re.compile(r"e[0-9]+")
"""The end ids a hand gives (R11), as the text form writes them."""
_NUMBER = re.compile(r"[0-9]+")


def _expose(word: str) -> int:
    """Return the value 0-9 written `word` (R14)."""
    if len(word) != 1 or word not in "0123456789":
        raise _not_a_value(word)
    return int(word)


def _not_a_value(expose: object) -> MalformedMove:
    return MalformedMove("R14", f"expose {expose!r} is not a number 0-9")
