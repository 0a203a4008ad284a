"""The rules of All Fives (ALLFIVES.md F1-F16): pure, no I/O, clock or randomness.

Shared with Spinner: the `Tile` objects (the double-six set is a part of R1's), plain
matching (`service.rules.matching`, F7 is R13 without wild halves), `Move` and the errors.
"""

from service.rules.allfives.hand import FivesHand
from service.rules.allfives.tiles import FIVES_SET
from service.rules.allfives.turns import check_move, legal_moves

__all__ = ["FIVES_SET", "FivesHand", "check_move", "legal_moves"]
