"""Fast All Fives play on a determinized hand: moves applied without events, scored as the
commands score them (F10, F12-F15), every seat following the quick greedy policy."""

from __future__ import annotations

from service.game.allfives.hand import FivesHand
from service.game.allfives.scoring import hand_points, play_points
from service.game.allfives.turns import legal_moves
from service.rules.moves import Move


def points_of(hand: FivesHand, move: Move) -> int:
    """Return what `move` scores now (F10): 0 for a draw or a pass."""
    if move.tile is None:
        return 0
    return play_points(hand.count_after(move.tile, move.end, move.expose))


def quick(hand: FivesHand, moves: list[Move]) -> Move:
    """The playouts' policy: the most points now, then the heaviest tile."""
    if len(moves) == 1:
        return moves[0]
    return max(moves, key=lambda m: (points_of(hand, m), m.tile.value if m.tile else 0))


def apply(hand: FivesHand, seat: int, move: Move, gained: list[int], totals: list[int],
          target: int) -> bool:
    """Apply a legal move, adding its points to `gained`; return whether the hand ended:
    the target reached (F15), a domino (F12) or a block (F13), its points added too."""
    tile = move.tile
    if tile is not None:
        points = points_of(hand, move)
        hand.apply_play(seat, tile, move.end, move.expose, hand.new_end_ids(tile, move.end))
        if points:
            gained[seat] += points
            if totals[seat] + gained[seat] >= target:
                return True
        if hand.tiles[seat]:
            return False
    elif move.action == "draw":
        hand.apply_draw(seat, hand.boneyard[0])
        return False
    else:
        hand.apply_pass(seat)
        if not hand.blocked:
            return False
    winner, points_left = hand_points(hand.tiles)
    if winner is not None:
        gained[winner] += points_left[winner]
    return True


def finish(hand: FivesHand, gained: list[int], totals: list[int], target: int) -> None:
    """Play the hand out to its end, every seat following `quick`."""
    ended = False
    while not ended:
        seat = hand.turn
        ended = apply(hand, seat, quick(hand, legal_moves(hand, seat)), gained, totals, target)
