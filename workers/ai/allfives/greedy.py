"""The All Fives `greedy` level: the biggest score now, then the play that leaves the next
players the least to score, then the heaviest tile shed."""

from __future__ import annotations

from service.game.allfives.scoring import play_points
from service.rules.matching import EXPOSES
from service.rules.moves import Move
from workers.ai.allfives.playout import points_of
from workers.ai.allfives.view import FivesView


def choose(view: FivesView) -> Move:
    """Return the greedy move: a forced draw or pass as it comes, else the best play."""
    moves = view.legal_moves
    if len(moves) == 1:
        return moves[0]
    return max(moves, key=lambda m: (points_of(view.table, m), -threat(view, m),
                                     m.tile.value if m.tile else 0))


def threat(view: FivesView, move: Move) -> int:
    """Return the most any tile this seat cannot see would score on the table `move`
    leaves (F10): what it blocks, the less the better."""
    tile = move.tile
    assert tile is not None
    after = view.table.clone()
    after.apply_play(view.seat, tile, move.end, move.expose, after.new_end_ids(tile, move.end))
    if not after.tiles[view.seat]:
        return 0  # a domino: nobody plays after it
    most = 0
    for other in view.unseen:
        row = EXPOSES[other.index]
        for end, value in after.ends.items():
            if row[value]:
                most = max(most, play_points(after.count_after(other, end, row[value][0])))
    return most
