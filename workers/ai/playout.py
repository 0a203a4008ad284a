"""Fast play on a determinized hand: moves applied without events, and a greedy default policy."""

from __future__ import annotations

from typing import Final

from service.rules.hand import Hand
from service.rules.matching import EXPOSES, MATCHES, PLAYABLE_ON
from service.rules.moves import Move
from service.rules.outcomes import LIFT, after_pass, after_play
from service.rules.scoring import hand_result
from service.rules.tiles import TILES, Tile
from service.rules.turns import targets

Play = tuple[Tile, str, int]
"""A play on an end: the tile, the end id and the value it leaves."""


def apply(hand: Hand, seat: int, move: Move) -> bool:
    """Apply a legal move as `make_move` would, without events; return whether the hand ended."""
    if move.action == "play":
        assert move.tile is not None and move.expose is not None
        return _play(hand, seat, move.tile, move.end, move.expose)
    if move.action == "draw":
        hand.apply_draw(seat, hand.boneyard[0])
        return False
    return _pass(hand, seat)


def finish(hand: Hand) -> None:
    """Play the hand out to its end, every seat following the default policy."""
    while not _step(hand, hand.turn):  # type: ignore[arg-type]
        pass


def outcome(hand: Hand) -> tuple[list[int], int]:
    """Return an ended hand's points per seat (R21) and its winner (R22)."""
    return hand_result(hand.tiles)


DOUBLE_BONUS = 5
"""A double's obligations (R17) can stall the table: greedy values it this many points more."""


def _rank(tile: Tile) -> int:
    return 100 * (not tile.wild_halves) + tile.value + DOUBLE_BONUS * tile.is_double


SHED_RANK: Final = tuple(_rank(t) for t in TILES)
"""SHED_RANK[tile.index]: greedy sheds spinners (wild, R13) last, else the most points first."""


def keep_counts(held: list[Tile], played: Tile) -> list[int]:
    """Return, per value 0-9, how many of the other tiles held could go on an end of it."""
    counts = [0] * 10
    for tile in held:
        if tile is not played:
            for value in MATCHES[tile.index]:
                counts[value] += 1
    return counts


def _step(hand: Hand, seat: int) -> bool:
    play = default_play(hand, seat)
    if play is not None:
        return _play(hand, seat, *play)
    if hand.drawn is None and hand.boneyard:
        hand.apply_draw(seat, hand.boneyard[0])
        return False
    return _pass(hand, seat)


def default_play(hand: Hand, seat: int) -> Play | None:
    """The greedy play: the best tile by `SHED_RANK`, leaving the value the seat can follow most."""
    ends = targets(hand)
    mask = 0
    for value in ends.values():
        mask |= 1 << value
    best, top = None, -1
    for tile in (hand.tiles[seat] if hand.drawn is None else (hand.drawn,)):
        rank = SHED_RANK[tile.index]
        if rank > top and PLAYABLE_ON[tile.index] & mask:
            best, top = tile, rank
    if best is None:
        return None
    row = EXPOSES[best.index]
    options = [(end, exposes) for end, value in ends.items() if (exposes := row[value])]
    end, exposes = options[0]
    values = {x for _, xs in options for x in xs} if len(options) > 1 else exposes
    if len(values) == 1:
        return best, end, exposes[0]
    counts = keep_counts(hand.tiles[seat], best)
    expose = max(values, key=counts.__getitem__)
    return best, next(end for end, xs in options if expose in xs), expose


def _play(hand: Hand, seat: int, tile: Tile, end: str | None, expose: int) -> bool:
    hand.apply_play(seat, tile, end, expose, hand.new_end_ids(tile, end))
    return after_play(hand, seat) is not None  # R19


def _pass(hand: Hand, seat: int) -> bool:
    hand.apply_pass(seat)
    outcome = after_pass(hand)
    if outcome == LIFT:  # R18
        hand.lift_obligations()
        return False
    return outcome is not None  # R20
