"""What a seat may do now in All Fives (F6-F8, F11) and why anything else is refused."""

from __future__ import annotations

from typing import Final, NoReturn

from service.game.allfives.hand import FivesHand
from service.game.allfives.tiles import FIVES_SET, HIGHEST, IN_SET, check_in_set
from service.rules.errors import IllegalMove, OutOfTurn
from service.rules.hand import END_IDS
from service.rules.matching import EXPOSES, PLAYABLE_ON
from service.rules.moves import DRAW, PASS, Move
from service.rules.tiles import TILES

LEADS: Final = tuple(Move("play", tile, None, None) for tile in TILES)
"""LEADS[tile.index]: the lead of that tile, alone in the middle (F6), built once."""

END_IDS_USED: Final = END_IDS[1:len(FIVES_SET) + 4]
"""The end ids a hand can open (F8): the lead at most 4 (a spinner), a spinner on an end 3,
any other tile 1, so 28 tiles at most 31."""

PLAYS: Final = tuple({end: tuple(tuple(Move("play", tile, end, x) for x in row)
                                 for row in EXPOSES[tile.index][:HIGHEST + 1])
                      for end in END_IDS_USED} if tile in IN_SET else {} for tile in TILES)
"""PLAYS[tile.index][end id][end value]: the plays of that tile there (F7), built once in
plain dicts, so that listings share them and build none."""


def has_play(hand: FivesHand, seat: int) -> bool:
    """Return whether the seat holds a tile it can play on an open end (F7, F11)."""
    mask = held = 0
    for value in hand.ends.values():  # the values of the open ends as a bit set
        mask |= 1 << value
    for tile in hand.tiles[seat]:  # the values the held tiles match, likewise
        held |= PLAYABLE_ON[tile.index]
    return bool(mask & held)


def legal_moves(hand: FivesHand, seat: int) -> list[Move]:
    """Return every move F11 allows the seat now; empty when it is not its turn."""
    if hand.turn != seat:
        return []
    held = hand.tiles[seat]
    if not hand.layout:  # F6: any tile leads, alone in the middle
        return [LEADS[tile.index] for tile in held]
    ends, mask = hand.ends, 0
    for value in ends.values():  # as in has_play, inlined: this path is hot
        mask |= 1 << value
    plays: list[Move] = []
    for tile in held:
        if PLAYABLE_ON[tile.index] & mask:
            row, cached = EXPOSES[tile.index], PLAYS[tile.index]
            for end, value in ends.items():
                if row[value]:
                    plays += cached[end][value]  # plain dicts: the fast subscript
    return plays or [DRAW if hand.boneyard else PASS]


def check_move(hand: FivesHand, seat: int, move: Move) -> Move:
    """Return the move with its `expose` filled in, or raise the RuleError it breaks."""
    if hand.turn != seat:
        raise OutOfTurn("F2", f"it is seat {hand.turn}'s turn, not seat {seat}'s")
    return _check_play(hand, seat, move) if move.action == "play" else _check_no_play(
        hand, seat, move)


def _check_no_play(hand: FivesHand, seat: int, move: Move) -> Move:
    """A draw or a pass: only with no legal play, a draw while the boneyard lasts (F11)."""
    if not hand.layout:
        raise IllegalMove("F6", "the leader plays first: any tile of its hand")
    if has_play(hand, seat):
        raise IllegalMove("F11", f"no {move.action} while you have a legal play")
    if (move.action == "draw") != bool(hand.boneyard):
        raise IllegalMove("F11", "the boneyard is empty; pass instead" if move.action == "draw"
                          else "you have no play, so you must draw before passing")
    return move


def _check_play(hand: FivesHand, seat: int, move: Move) -> Move:
    _, tile, end, expose = move
    assert tile is not None
    if tile not in hand.tiles[seat]:
        check_in_set(tile)  # F1 first: a tile of no double-six set is held by nobody
        raise IllegalMove("F11", f"you do not hold {tile}")
    if not hand.layout:
        if end is not None or expose is not None:
            raise IllegalMove("F6", "the lead lies alone in the middle: no end, no expose")
        return move
    value = hand.ends.get(end or "")
    if value is None:
        _refuse_end(hand, end)
    exposes = EXPOSES[tile.index][value]
    if not exposes:
        raise IllegalMove("F7", f"{tile} does not match the {value} on end {end}")
    if expose is None:
        return move._replace(expose=exposes[0])
    if expose != exposes[0]:
        raise IllegalMove("F7", f"{tile} on end {end} leaves {exposes[0]}, not {expose}")
    return move


def _refuse_end(hand: FivesHand, end: str | None) -> NoReturn:
    if end is None:
        raise IllegalMove("F8", "name the open end to play on")
    if end in hand.sides:
        raise IllegalMove("F8", f"{end} is a narrow side of the spinner: it opens once both "
                                "long ends are covered")
    raise IllegalMove("F8", f"{end!r} is not an open end")
