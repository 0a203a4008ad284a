"""Fast play on a determinized hand: moves applied without events, every seat shedding greedily."""

from __future__ import annotations

from service.rules.hand import Hand
from service.rules.moves import Move
from service.rules.outcomes import LIFT, after_pass, after_play
from service.rules.scoring import hand_result
from service.rules.tiles import Tile
from service.rules.turns import targets
from workers.ai.shedding import shed


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
    """Play the hand out to its end, every seat following the greedy policy (`shed`)."""
    while not _step(hand, hand.turn):  # type: ignore[arg-type]
        pass


def outcome(hand: Hand) -> tuple[list[int], int]:
    """Return an ended hand's points per seat (R21) and its winner (R22)."""
    return hand_result(hand.tiles)


def _step(hand: Hand, seat: int) -> bool:
    play = shed(hand.tiles[seat], hand.drawn, targets(hand))
    if play is not None:
        return _play(hand, seat, *play)
    if hand.drawn is None and hand.boneyard:
        hand.apply_draw(seat, hand.boneyard[0])
        return False
    return _pass(hand, seat)


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
