"""What a seat may do now (R10, R13-R18) and why anything else is refused."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, NoReturn, Protocol

from service.rules.errors import IllegalMove, OutOfTurn
from service.rules.hand import Hand
from service.rules.matching import EXPOSES, MATCH_VALUES, PLAYABLE_ON
from service.rules.moves import DRAW, PASS, Move
from service.rules.opening import opening_value
from service.rules.tiles import TILES, Tile


def target_ends(hand: Hand) -> list[tuple[str, int]]:
    """Return the ends a play may go on now: the obligated ones while any are owed (R17)."""
    return list(targets(hand).items())


class Table(Protocol):
    """What `targets` reads: a `Hand`, or one seat's view of it."""

    @property
    def ends(self) -> Mapping[str, int]:
        """The open ends, id -> value (R11)."""

    @property
    def obligations(self) -> Sequence[str]:
        """The end ids owed now (R17)."""


def targets(table: Table) -> Mapping[str, int]:
    """Return the ends a play may go on now, id -> value (R17); read-only, may be `.ends`."""
    owed = table.obligations
    if not owed:
        return table.ends
    ends, owed_ends = table.ends, {}
    for end in owed:  # a loop builds this small dict faster than a comprehension
        owed_ends[end] = ends[end]
    return owed_ends


class _PlaysByEnd(dict[str, tuple[tuple[Move, ...], ...]]):
    """One tile's plays by end id, then by end value; each end's filled in on first use."""

    __slots__ = ("tile",)

    def __init__(self, tile: Tile) -> None:
        super().__init__()
        self.tile = tile

    def __missing__(self, end: str) -> tuple[tuple[Move, ...], ...]:
        tile, row = self.tile, EXPOSES[self.tile.index]
        plays = tuple(tuple(Move("play", tile, end, x) for x in row[v]) for v in range(10))
        self[end] = plays
        return plays


PLAYS: Final = tuple(_PlaysByEnd(t) for t in TILES)
"""PLAYS[tile.index][end id][end value]: the plays of that tile there, one per value it can
leave (R13, R14). Moves are immutable, so listings share them and build none; a hand has
under a hundred end ids, so the table stays small."""


def plays_of(tile: Tile, ends: Mapping[str, int]) -> list[Move]:
    """Return every play of `tile` on `ends` (id -> value), end by end."""
    row, cached = EXPOSES[tile.index], PLAYS[tile.index]
    plays: list[Move] = []
    for end, value in ends.items():
        if row[value]:
            plays += cached[end][value]
    return plays


def target_values(hand: Hand) -> int:
    """Return the values of the ends a play may go on now (R17) as a bit set, bit v for v."""
    ends, owed, mask = hand.ends, hand.obligations, 0
    if owed:  # without building the dict `targets` returns
        for end in owed:
            mask |= 1 << ends[end]
        return mask
    for value in ends.values():
        mask |= 1 << value
    return mask


def has_play(hand: Hand, seat: int) -> bool:
    """Return whether the seat holds a tile it can play now (R16)."""
    mask = target_values(hand)
    for tile in hand.tiles[seat]:  # noqa: SIM110 -- a loop is faster than any() on a generator
        if PLAYABLE_ON[tile.index] & mask:
            return True
    return False


def owed_plays(hand: Hand, held: list[Tile]) -> list[Move]:
    """Return every play of the `held` tiles on the ends owed now (R17): tile by tile, then
    end by end (R13, R14)."""
    ends, owed, mask = hand.ends, hand.obligations, target_values(hand)
    plays: list[Move] = []
    for tile in held:
        if PLAYABLE_ON[tile.index] & mask:  # most tiles match no owed end: skip them at once
            row, cached = EXPOSES[tile.index], PLAYS[tile.index]
            for end in owed:
                value = ends[end]
                if row[value]:
                    plays += cached[end][value]
    return plays


def open_plays(hand: Hand, held: list[Tile]) -> list[Move]:
    """Return every play of the `held` tiles on all open ends, found through
    `hand.ends_by_value`: tile by tile, then by end value, oldest end first (R13, R14)."""
    ends_by_value = hand.ends_by_value
    plays: list[Move] = []
    for tile in held:
        cached = PLAYS[tile.index]
        for value in MATCH_VALUES[tile.index]:  # the index spares a look at every open end
            for end in ends_by_value[value]:
                plays += cached[end][value]
    return plays


def opening_plays(hand: Hand) -> list[Move]:
    """Return the opening plays: the opening double alone in the centre (R8-R10)."""
    return [Move("play", t, None, opening_value(t, hand.number)) for t in hand.openers]


def legal_moves(hand: Hand, seat: int) -> list[Move]:
    """Return every move R16 allows the seat now; empty when it is not its turn."""
    if hand.turn != seat:
        return []
    if not hand.layout:
        return opening_plays(hand)
    drawn = hand.drawn
    if drawn is None:
        held = hand.tiles[seat]
        plays = owed_plays(hand, held) if hand.obligations else open_plays(hand, held)
        return plays or [DRAW if hand.boneyard else PASS]
    if PLAYABLE_ON[drawn.index] & target_values(hand):  # a drawn tile mostly fits nowhere
        return plays_of(drawn, targets(hand))
    return [PASS]


def check_move(hand: Hand, seat: int, move: Move) -> Move:
    """Return the move with its `expose` filled in, or raise the RuleError it breaks."""
    if hand.turn != seat:
        raise OutOfTurn("R4", f"it is seat {hand.turn}'s turn, not seat {seat}'s")
    if move.action == "play":
        return _check_play(hand, seat, move)
    if not hand.layout:
        raise IllegalMove("R10", "the hand must first be opened with the opening double")
    if move.action == "draw":
        _check_draw(hand, seat)
    else:
        _check_pass(hand, seat)
    return move


def _check_draw(hand: Hand, seat: int) -> None:
    if hand.drawn is not None:
        raise IllegalMove("R16", "a turn allows one draw; play the drawn tile or pass")
    if has_play(hand, seat):
        raise IllegalMove("R16", "no draw while you have a legal play")
    if not hand.boneyard:
        raise IllegalMove("R16", "the boneyard is empty; pass instead")


def _check_pass(hand: Hand, seat: int) -> None:
    if hand.drawn is not None:
        if PLAYABLE_ON[hand.drawn.index] & target_values(hand):
            raise IllegalMove("R16", f"the tile you drew, {hand.drawn}, can be played: play it")
        return
    if has_play(hand, seat):
        raise IllegalMove("R16", "no pass while you have a legal play")
    if hand.boneyard:
        raise IllegalMove("R16", "you have no play, so you must draw before passing")


def _check_play(hand: Hand, seat: int, move: Move) -> Move:
    _, tile, end, expose = move  # unpacked once: a tuple is faster to unpack than to read
    assert tile is not None
    if tile not in hand.tiles[seat]:
        raise IllegalMove("R16", f"you do not hold {tile}")
    if not hand.layout:
        return _check_opening(hand, move, tile)
    if hand.drawn is not None and tile is not hand.drawn:
        raise IllegalMove("R16", f"after drawing you may only play the drawn tile, {hand.drawn}")
    value = hand.ends.get(end or "")  # None: no open end of that id, or none named
    if value is None or (hand.obligations and end not in hand.obligations):
        _refuse_end(hand, end)
    exposes = EXPOSES[tile.index][value]
    if not exposes:
        raise IllegalMove("R13", f"{tile} does not match the {value} on end {end}")
    if expose in exposes:  # the usual case: a move as listed
        return move
    return _with_expose(move, tile, exposes)


def _refuse_end(hand: Hand, end: str | None) -> NoReturn:
    if end is None:
        raise IllegalMove("R11", "name the open end to play on")
    if end not in hand.ends:
        raise IllegalMove("R11", f"{end!r} is not an open end")
    owed = ", ".join(hand.obligations)
    raise IllegalMove("R17", f"a double is pending: the next play must go on {owed}")


def _check_opening(hand: Hand, move: Move, tile: Tile) -> Move:
    if tile not in hand.openers:
        allowed = " or ".join(str(t) for t in hand.openers)
        raise IllegalMove("R10", f"the first play of this hand must be {allowed}")
    if move.end is not None:
        raise IllegalMove("R10", "the opening double is placed alone in the centre (end null)")
    return _with_expose(move, tile, (opening_value(tile, hand.number),))


def _with_expose(move: Move, tile: Tile, exposes: tuple[int, ...]) -> Move:
    if move.expose is None:
        if len(exposes) > 1:
            raise IllegalMove("R14", f"{tile} can leave any value 0-9 here: give expose")
        return move._replace(expose=exposes[0])
    if move.expose not in exposes:
        allowed = ", ".join(map(str, exposes))
        raise IllegalMove("R14", f"{tile} here can only leave {allowed}, not {move.expose}")
    return move

