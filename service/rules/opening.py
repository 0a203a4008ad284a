"""Who opens a hand and with what (R5, R7, R8, R9, R10, R12)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from service.rules.tiles import DOUBLE_SPINNER, Tile, double

OPENING_RULES: Final = ("draw", "next_lower")
PLAYERS: Final = range(2, 9)


def tiles_per_hand(players: int) -> int:
    """Return how many tiles each seat is dealt (R5): 14 with 2 players, else 7."""
    return 14 if players == 2 else 7


def opening_double(hand_number: int) -> Tile:
    """Return the double `d-d` that hand `hand_number` opens with, d = 10 - h (R7)."""
    return double(10 - hand_number)


def opening_value(opener: Tile, hand_number: int) -> int:
    """Return the value of the opening double's ends (R12): S-S stands for d-d."""
    return 10 - hand_number if opener is DOUBLE_SPINNER else opener.lo


def openers_in_hands(
    hands: Sequence[Sequence[Tile]], hand_number: int, rule: str
) -> tuple[int, tuple[Tile, ...]] | None:
    """Return the opening seat and the tiles it may open with, or None if R9's search is due."""
    dd = opening_double(hand_number)
    for seat, held in enumerate(hands):
        if dd in held:
            return seat, tuple(t for t in (dd, DOUBLE_SPINNER) if t in held)  # R8
    for seat, held in enumerate(hands):
        if DOUBLE_SPINNER in held:
            return seat, (DOUBLE_SPINNER,)  # R8
    if rule == "next_lower":
        for lower in range(9 - hand_number, -1, -1):  # R9 option: highest double below d
            for seat, held in enumerate(hands):
                if double(lower) in held:
                    return seat, (double(lower),)
    return None


def opens_search(drawn: Tile, hand_number: int, rule: str) -> bool:
    """Return whether a tile drawn in R9's boneyard search opens the hand."""
    if drawn is DOUBLE_SPINNER or drawn is opening_double(hand_number):
        return True
    return rule == "next_lower" and drawn.is_double and drawn.lo < 10 - hand_number
