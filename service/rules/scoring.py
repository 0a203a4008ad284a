"""Hand scores, hand winners and match winners (R3, R21, R22, R23)."""

from __future__ import annotations

from collections.abc import Sequence

from service.rules.tiles import Tile


def points(tiles: Sequence[Tile]) -> int:
    """Return the value of the tiles a seat still holds (R3, R21)."""
    return sum(t.value for t in tiles)


def hand_result(tiles_by_seat: Sequence[Sequence[Tile]]) -> tuple[list[int], int]:
    """Return an ended hand's points per seat (R21) and winner: who went out (R19), else the
    blocked hand's winner (R22)."""
    scores = [points(held) for held in tiles_by_seat]
    out = next((seat for seat, held in enumerate(tiles_by_seat) if not held), None)
    return scores, out if out is not None else blocked_winner(scores)


def blocked_winner(scores: Sequence[int]) -> int:
    """Return the winner of a blocked hand: lowest score, ties to the lowest seat (R22)."""
    return min(range(len(scores)), key=lambda seat: (scores[seat], seat))


def match_winners(totals: Sequence[int]) -> list[int]:
    """Return every seat with the lowest total; equal lowest totals share the win (R23)."""
    best = min(totals)
    return [seat for seat, total in enumerate(totals) if total == best]
