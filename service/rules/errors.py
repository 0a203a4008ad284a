"""Rule errors are data: each carries the rule it invokes and a sentence for the player."""

from __future__ import annotations


class RuleError(Exception):
    """A move that cannot be accepted, with the rule number (`R14`) it breaks."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"violates {rule}: {message}")
        self.rule = rule
        self.message = message

    @property
    def detail(self) -> str:
        """The sentence a player reads: `violates R7: ...`."""
        return str(self)


class MalformedMove(RuleError):
    """The move is not well formed: not a tile (R2), not an action, an expose outside 0-9."""


class IllegalMove(RuleError):
    """The move is well formed but the rules forbid it now."""


class OutOfTurn(IllegalMove):
    """The seat is not the one to move, or the match has ended (R4, R24)."""
