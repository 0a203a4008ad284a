"""The rules of Spinner Dominoes (RULES.md R1-R26): pure, no I/O, clock or randomness."""

from service.rules.errors import IllegalMove, MalformedMove, OutOfTurn, RuleError
from service.rules.hand import Hand
from service.rules.moves import DRAW, PASS, Move
from service.rules.position import parse_position, position_text
from service.rules.tiles import TILES, Tile
from service.rules.turns import check_move, legal_moves

__all__ = [
    "DRAW", "PASS", "TILES", "Hand", "IllegalMove", "MalformedMove", "Move", "OutOfTurn",
    "RuleError", "Tile", "check_move", "legal_moves", "parse_position", "position_text",
]
