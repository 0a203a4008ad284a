"""Commands: check a move against the rules and record the events it causes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from service.game import events as ev
from service.game.state import GameState, evolve
from service.rules.errors import OutOfTurn
from service.rules.hand import Hand
from service.rules.moves import Move
from service.rules.opening import opening_double, tiles_per_hand
from service.rules.scoring import hand_result, match_winners
from service.rules.tiles import Tile
from service.rules.turns import check_move

Shuffle = Callable[[int], Sequence[Tile]]
"""Gives the shuffled 66-tile deck for a hand number; the caller owns the randomness (R26)."""


class Recorder:
    """Seals each decided event (seq, time, hash) and folds it into the state at once."""

    __slots__ = ("state", "at", "events")

    def __init__(self, state: GameState, at: str) -> None:
        self.state, self.at = state, at
        self.events: list[ev.Event] = []

    def record(self, type_: str, seat: int | None, data: dict[str, Any]) -> None:
        """Seal an event, apply it to the state and keep it."""
        state = self.state
        event = ev.seal({"type": type_, "seat": seat, "data": data},
                        state.version + 1, self.at, state.last_hash)
        evolve(state, event)
        self.events.append(event)


class Simulator(Recorder):
    """Folds each decided event into the state unsealed (no seq, time or hash), for speed."""

    __slots__ = ()

    def record(self, type_: str, seat: int | None, data: dict[str, Any]) -> None:
        """Apply an unsealed event `{type, seat, data}` to the state and keep it."""
        event = {"type": type_, "seat": seat, "data": data}
        evolve(self.state, event)
        self.events.append(event)


def create_game(players: list[dict[str, Any]], rules: dict[str, Any], shuffle: Shuffle,
                at: str, *, sealed: bool = True) -> tuple[GameState, list[ev.Event]]:
    """Record a new match and deal its first hand, shuffled by seat 0 (R6).

    `sealed=False` records unsealed events, replayable but unchained: for simulations.
    """
    rec = (Recorder if sealed else Simulator)(GameState(), at)
    rec.record(ev.GAME_CREATED, None, {"players": players, "rules": rules})
    _deal(rec, 1, 0, shuffle(1))
    return rec.state, rec.events


def make_move(state: GameState, seat: int, move: Move, shuffle: Shuffle,
              at: str, *, sealed: bool = True) -> list[ev.Event]:
    """Check `move` for `seat`, record what follows from it, and return the new events."""
    if state.status != "playing":
        raise OutOfTurn("R24", "the match has ended and accepts no more moves")
    hand = state.hand
    if hand is None or hand.turn is None or state.hand_over:  # state.turn is None, faster
        raise OutOfTurn("R4", "no seat is to move now")
    action, tile, end, expose = check_move(hand, seat, move)
    rec = (Recorder if sealed else Simulator)(state, at)
    if action == "play":
        assert tile is not None
        _play(rec, hand, seat, tile, end, expose)
    elif action == "draw":
        rec.record(ev.TILE_DRAWN, seat, {"tile": hand.boneyard[0].text, "reason": "draw"})
    else:
        _pass(rec, hand, seat)
    if state.hand_over:
        _after_hand(rec, shuffle)
    return rec.events


def _play(rec: Recorder, hand: Hand, seat: int, tile: Tile, end: str | None,
          expose: int | None) -> None:
    rec.record(ev.TILE_PLAYED, seat, {"tile": tile.text, "end": end, "expose": expose,
                                      "new_ends": hand.new_end_ids(tile, end)})
    if not hand.tiles[seat]:  # R19
        _end_hand(rec, hand, "domino")


def _pass(rec: Recorder, hand: Hand, seat: int) -> None:
    rec.record(ev.PASSED, seat, {})
    outcome = hand.round_of_passes()
    if outcome == "lift":  # R18
        rec.record(ev.OBLIGATION_LIFTED, None, {"ends": list(hand.obligations)})
    elif outcome == "block":  # R20
        _end_hand(rec, hand, "blocked")


def _end_hand(rec: Recorder, hand: Hand, ended_by: str) -> None:
    scores, winner = hand_result(hand.tiles)  # R21, R22
    rec.record(ev.HAND_ENDED, None, {
        "hand_number": hand.number, "ended_by": ended_by, "points": scores, "winner": winner,
        "hands": [[t.text for t in held] for held in hand.tiles],
    })


def _after_hand(rec: Recorder, shuffle: Shuffle) -> None:
    state = rec.state
    last = state.scores[-1]
    if last["hand_number"] >= state.rules["hands"]:  # R23
        rec.record(ev.GAME_ENDED, None, {"totals": list(state.totals),
                                         "winners": match_winners(state.totals)})
    else:  # R6: the winner shuffles the next hand
        number = last["hand_number"] + 1
        _deal(rec, number, last["winner"], shuffle(number))


def _deal(rec: Recorder, number: int, shuffler: int, deck: Sequence[Tile]) -> None:
    seats = rec.state.seats
    k = tiles_per_hand(seats)
    texts = [t.text for t in deck]
    rec.record(ev.HAND_STARTED, None, {
        "hand_number": number, "opening_double": opening_double(number).text,
        "shuffler": shuffler, "deck": texts,
        "hands": [texts[s * k:(s + 1) * k] for s in range(seats)],
    })
    hand = rec.state.hand
    assert hand is not None
    while hand.searching:  # R9: the server searches; the searcher keeps what it draws
        seat = hand.turn
        rec.record(ev.TILE_DRAWN, seat, {"tile": hand.boneyard[0].text, "reason": "search"})
