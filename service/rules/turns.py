"""What a seat may do now (R10, R13-R18) and why anything else is refused."""

from __future__ import annotations

from service.rules.errors import IllegalMove, OutOfTurn
from service.rules.hand import Hand
from service.rules.matching import EXPOSES, MATCHES
from service.rules.moves import DRAW, PASS, Move
from service.rules.opening import opening_value
from service.rules.tiles import Tile


def target_ends(hand: Hand) -> list[tuple[str, int]]:
    """Return the ends a play may go on now: the obligated ones while any are owed (R17)."""
    if hand.obligations:
        return [(end, hand.ends[end]) for end in hand.obligations]
    return list(hand.ends.items())


def plays_of(tile: Tile, ends: list[tuple[str, int]]) -> list[Move]:
    """Return every play of `tile` on `ends`, one per value it can leave (R13, R14)."""
    row = EXPOSES[tile.index]
    return [Move("play", tile, end, x) for end, value in ends for x in row[value]]


def can_play(tile: Tile, ends: list[tuple[str, int]]) -> bool:
    """Return whether `tile` matches any of `ends` (R13)."""
    values = MATCHES[tile.index]
    return any(value in values for _, value in ends)


def has_play(hand: Hand, seat: int) -> bool:
    """Return whether the seat holds a tile it can play now (R16)."""
    ends = target_ends(hand)
    values = {value for _, value in ends}
    return any(not values.isdisjoint(MATCHES[t.index]) for t in hand.tiles[seat])


def opening_plays(hand: Hand) -> list[Move]:
    """Return the opening plays: the opening double alone in the centre (R8-R10)."""
    return [Move("play", t, None, opening_value(t, hand.number)) for t in hand.openers]


def legal_moves(hand: Hand, seat: int) -> list[Move]:
    """Return every move R16 allows the seat now; empty when it is not its turn."""
    if hand.turn != seat:
        return []
    if not hand.layout:
        return opening_plays(hand)
    ends = target_ends(hand)
    if hand.drawn is not None:
        return plays_of(hand.drawn, ends) or [PASS]
    plays = [m for t in hand.tiles[seat] for m in plays_of(t, ends)]
    if plays:
        return plays
    return [DRAW] if hand.boneyard else [PASS]


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
        if can_play(hand.drawn, target_ends(hand)):
            raise IllegalMove("R16", f"the tile you drew, {hand.drawn}, can be played: play it")
        return
    if has_play(hand, seat):
        raise IllegalMove("R16", "no pass while you have a legal play")
    if hand.boneyard:
        raise IllegalMove("R16", "you have no play, so you must draw before passing")


def _check_play(hand: Hand, seat: int, move: Move) -> Move:
    tile = move.tile
    assert tile is not None
    if tile not in hand.tiles[seat]:
        raise IllegalMove("R16", f"you do not hold {tile}")
    if not hand.layout:
        return _check_opening(hand, move, tile)
    if hand.drawn is not None and tile is not hand.drawn:
        raise IllegalMove("R16", f"after drawing you may only play the drawn tile, {hand.drawn}")
    value = _end_value(hand, move.end)
    exposes = EXPOSES[tile.index][value]
    if not exposes:
        raise IllegalMove("R13", f"{tile} does not match the {value} on end {move.end}")
    return _with_expose(move, tile, exposes)


def _end_value(hand: Hand, end: str | None) -> int:
    if end is None:
        raise IllegalMove("R11", "name the open end to play on")
    if end not in hand.ends:
        raise IllegalMove("R11", f"{end!r} is not an open end")
    if hand.obligations and end not in hand.obligations:
        owed = ", ".join(hand.obligations)
        raise IllegalMove("R17", f"a double is pending: the next play must go on {owed}")
    return hand.ends[end]


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

