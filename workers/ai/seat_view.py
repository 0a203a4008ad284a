"""What one seat may see (R25), gathered for the AI: the table, its own tiles, public history."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from service.game import events as ev
from service.game.state import GameState
from service.game.views import redact
from service.rules.hand import Hand
from service.rules.matching import MATCHES
from service.rules.moves import Move
from service.rules.tiles import DOUBLE_SPINNER, TILES, Tile, double
from service.rules.turns import legal_moves, target_ends


class Void(NamedTuple):
    """A public fact: `seat` held none of `tiles` at a moment when it had drawn `draws` tiles."""

    seat: int
    action: str  # "draw" or "pass": it could not play on `ends` then; "deal": R8/R9 opening
    ends: tuple[int, ...]
    tiles: frozenset[Tile]
    draws: int


@dataclass(frozen=True)
class SeatView:
    """Everything one seat may see of the current hand, and its legal moves now (R25)."""

    seat: int
    seats: int
    hand_number: int
    rule: str
    shuffler: int
    tiles: tuple[Tile, ...]
    layout: tuple[tuple[Tile, str | None, int], ...]
    ends: Mapping[str, int]
    obligations: tuple[str, ...]
    next_end: int
    tile_counts: tuple[int, ...]
    boneyard_count: int
    turn: int | None
    drawn: Tile | None
    passes: int
    legal_moves: tuple[Move, ...]
    totals: tuple[int, ...]
    draws: tuple[int, ...]
    history: tuple[Void, ...]

    @property
    def unseen(self) -> list[Tile]:
        """The tiles this seat cannot see: other hands and the boneyard."""
        seen = set(self.tiles) | {t for t, _, _ in self.layout}
        return [t for t in TILES if t not in seen]


def seat_view(state: GameState, seat: int, log: Sequence[ev.Event] = ()) -> SeatView:
    """Return what `seat` may see; `log` (the game's events) supplies the public history."""
    hand = state.hand
    if hand is None:
        raise ValueError("no hand has started")
    draws, history = public_history(log, seat, state.seats, hand)
    my_turn = state.turn == seat
    return SeatView(
        seat=seat, seats=state.seats, hand_number=hand.number, rule=hand.rule,
        shuffler=hand.shuffler, tiles=tuple(hand.tiles[seat]), layout=tuple(hand.layout),
        ends=dict(hand.ends), obligations=tuple(hand.obligations), next_end=hand.next_end,
        tile_counts=tuple(len(held) for held in hand.tiles),
        boneyard_count=len(hand.boneyard), turn=state.turn,
        drawn=hand.drawn if my_turn else None, passes=hand.passes,
        legal_moves=tuple(legal_moves(hand, seat)) if my_turn else (),
        totals=tuple(state.totals), draws=draws, history=history,
    )


def public_history(log: Sequence[ev.Event], seat: int, seats: int, hand: Hand
                   ) -> tuple[tuple[int, ...], tuple[Void, ...]]:
    """Fold the current hand's events, redacted for `seat`: draws per seat and others' voids."""
    start = max((i for i, e in enumerate(log) if e["type"] == ev.HAND_STARTED), default=None)
    if start is None or log[start]["data"]["hand_number"] != hand.number:
        return (0,) * seats, ()
    fold = _Fold(redact(log[start], seat)["data"], seat, seats, hand.rule)
    for event in log[start + 1:]:
        fold.apply(redact(event, seat))
    return tuple(fold.draws), tuple(fold.voids)


class _Fold:
    """The public side of a hand, replayed from events one seat may see."""

    def __init__(self, started: dict[str, Any], me: int, seats: int, rule: str) -> None:
        self.me, self.rule = me, rule
        self.table = Hand(started["hand_number"], rule, seats, started["shuffler"])
        self.draws = [0] * seats
        self.voids: list[Void] = []
        self.searched = False

    def apply(self, event: ev.Event) -> None:
        """Fold one redacted event of the hand."""
        kind, seat, data = event["type"], event["seat"], event["data"]
        if kind == ev.TILE_DRAWN:
            self._drawn(seat, data["reason"])
        elif kind == ev.TILE_PLAYED:
            self._played(seat, Tile.parse(data["tile"]), data)
        elif kind == ev.PASSED:
            self._void(seat, "pass")
            self.table.apply_pass(seat)
        elif kind == ev.OBLIGATION_LIFTED:
            self.table.lift_obligations()

    def _drawn(self, seat: int, reason: str) -> None:
        if reason == "search":
            self.searched = True
        else:
            self._void(seat, "draw")
        self.draws[seat] += 1

    def _played(self, seat: int, tile: Tile, data: dict[str, Any]) -> None:
        table = self.table
        if not table.layout:
            self._deal_voids(seat, tile)
        table.tiles[seat].append(tile)
        table.apply_play(seat, tile, data["end"], data["expose"], data["new_ends"])

    def _void(self, seat: int, action: str) -> None:
        """Record that `seat` could play nothing on the ends targeted now (R16)."""
        if seat == self.me:
            return
        values = tuple(sorted({value for _, value in target_ends(self.table)}))
        tiles = frozenset(t for t in TILES if not MATCHES[t.index].isdisjoint(values))
        self.voids.append(Void(seat, action, values, tiles, self.draws[seat]))

    def _deal_voids(self, opener: int, tile: Tile) -> None:
        """Record which opening tiles each other seat was not dealt (R8, R9)."""
        for seat in range(self.table.seats):
            absent = dealt_none_of(seat, opener, tile, self.table.number, self.rule,
                                   self.searched)
            if seat != self.me and absent:
                self.voids.append(Void(seat, "deal", (), absent, self.draws[seat]))


def dealt_none_of(seat: int, opener: int, tile: Tile, number: int, rule: str,
                  searched: bool) -> frozenset[Tile]:
    """Return the tiles `seat` cannot have been dealt, given that `tile` opened the hand."""
    d = 10 - number
    if searched:  # R9: no hand held any tile that could open
        lower = range(d) if rule == "next_lower" else range(0)
    elif tile is DOUBLE_SPINNER:  # R8: d-d would have opened, unless the opener holds both
        return frozenset() if seat == opener else frozenset({double(d)})
    elif tile.lo < d:  # R9 next_lower: neither d-d, S-S nor a higher lower double was dealt
        lower = range(tile.lo + 1, d)
    else:
        return frozenset()
    return frozenset({double(d), DOUBLE_SPINNER, *map(double, lower)}) - {tile}
