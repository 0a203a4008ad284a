"""What one All Fives seat may see (R25, F16), gathered for the AI: the table, its own
tiles, the counts, the totals and what others' draws and passes revealed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from service.game import events as ev
from service.game.allfives.hand import FivesHand
from service.game.allfives.state import FivesState
from service.game.allfives.tiles import FIVES_SET
from service.game.allfives.turns import legal_moves
from service.rules.matching import MATCHES
from service.rules.moves import Move
from service.rules.tiles import Tile
from workers.ai.seat_view import Void


@dataclass(frozen=True)
class FivesView:
    """One seat's view of the hand in play and its legal moves now; `table` is the hand
    with every tile the seat cannot see taken out (other seats' and the boneyard's)."""

    seat: int
    seats: int
    table: FivesHand
    tiles: tuple[Tile, ...]
    tile_counts: tuple[int, ...]
    boneyard_count: int
    legal_moves: tuple[Move, ...]
    totals: tuple[int, ...]
    target: int
    draws: tuple[int, ...]
    history: tuple[Void, ...]

    @property
    def unseen(self) -> list[Tile]:
        """The tiles this seat cannot see: other hands and the boneyard."""
        seen = set(self.tiles) | {t for t, _, _ in self.table.layout}
        return [t for t in FIVES_SET if t not in seen]


def fives_view(state: FivesState, seat: int, log: Sequence[ev.Event] = ()) -> FivesView:
    """Return what `seat` may see; `log` (the hand's events or more) gives the voids."""
    hand = state.hand
    if hand is None:
        raise ValueError("no hand has started")
    table = hand.clone()
    table.tiles = [list(held) if s == seat else [] for s, held in enumerate(hand.tiles)]
    table.boneyard = []
    draws, history = voids(log, seat, hand)
    return FivesView(
        seat=seat, seats=hand.seats, table=table, tiles=tuple(hand.tiles[seat]),
        tile_counts=tuple(map(len, hand.tiles)), boneyard_count=len(hand.boneyard),
        legal_moves=tuple(legal_moves(hand, seat)) if state.turn == seat else (),
        totals=tuple(state.totals), target=state.target, draws=draws, history=history)


def voids(log: Sequence[ev.Event], seat: int, hand: FivesHand
          ) -> tuple[tuple[int, ...], tuple[Void, ...]]:
    """Fold the current hand's public events: draws per seat, and for each draw or pass of
    another seat the tiles it could not have held then (F11)."""
    start = max((i for i, e in enumerate(log) if e["type"] == ev.HAND_STARTED), default=None)
    draws, found = [0] * hand.seats, []
    if start is None or log[start]["data"]["hand_number"] != hand.number:
        return tuple(draws), ()
    table = FivesHand(hand.number, hand.seats, log[start]["data"]["leader"])
    for event in log[start + 1:]:
        kind, by, data = event["type"], event["seat"], event["data"]
        if kind in (ev.TILE_DRAWN, ev.PASSED) and by != seat:
            values = frozenset(table.ends.values())
            tiles = frozenset(t for t in FIVES_SET if not MATCHES[t.index].isdisjoint(values))
            found.append(Void(by, kind, tuple(sorted(values)), tiles, draws[by]))
        if kind == ev.TILE_DRAWN:
            draws[by] += 1
        elif kind == ev.TILE_PLAYED:
            tile = Tile.parse(data["tile"])
            table.tiles[by].append(tile)
            table.apply_play(by, tile, data["end"], data["expose"], data["new_ends"])
        elif kind == ev.PASSED:
            table.apply_pass(by)
    return tuple(draws), tuple(found)
