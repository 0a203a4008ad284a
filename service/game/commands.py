"""Commands: check a move against the rules and record the events it causes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.game import events as ev
from service.game.fairness import Shuffled, commitment
from service.game.state import GameState, Match
from service.game.state import record as _record
from service.rules.errors import OutOfTurn
from service.rules.hand import Hand
from service.rules.moves import Move
from service.rules.opening import opening_double, tiles_per_hand
from service.rules.outcomes import LIFT, after_pass, after_play
from service.rules.scoring import hand_result, match_winners
from service.rules.tiles import Tile
from service.rules.turns import check_move

Shuffle = Callable[[int], Shuffled]
"""Gives the shuffled 66-tile deck and its salt for a hand number; the caller owns the
randomness (R26)."""


def create_game(players: list[dict[str, Any]], rules: dict[str, Any], shuffle: Shuffle,
                at: str, *, sealed: bool = True) -> tuple[GameState, list[ev.Event]]:
    """Record a new match and deal its first hand, shuffled by seat 0 (R6).

    `sealed=False` records unsealed events, replayable but unchained: for simulations.
    """
    state, stamp = GameState(), at if sealed else None
    events: list[ev.Event] = []
    _record(state, events, stamp, ev.GAME_CREATED, None, {"players": players, "rules": rules})
    _deal(state, events, stamp, 1, 0, shuffle(1))
    return state, events


def refuse_after_the_end(state: Match[Any]) -> None:
    """Refuse any move once the match has ended, in either variant (R24)."""
    if state.status != "playing":
        raise OutOfTurn("R24", "the match has ended and accepts no more moves")


def make_move(state: GameState, seat: int, move: Move, shuffle: Shuffle,
              at: str, *, sealed: bool = True) -> list[ev.Event]:
    """Check `move` for `seat`, record what follows from it, and return the new events."""
    refuse_after_the_end(state)
    hand = state.hand
    if hand is None or hand.turn is None or state.hand_over:  # state.turn is None, faster
        raise OutOfTurn("R4", "no seat is to move now")
    action, tile, end, expose = check_move(hand, seat, move)
    events: list[ev.Event] = []
    stamp = at if sealed else None  # no recorder object per move: this path is hot
    if action == "play":
        assert tile is not None
        _play(state, events, stamp, hand, seat, tile, end, expose)
    elif action == "draw":
        _record(state, events, stamp, ev.TILE_DRAWN, seat,
                {"tile": hand.boneyard[0].text, "reason": "draw"})
    else:
        _pass(state, events, stamp, hand, seat)
    if state.hand_over:
        _after_hand(state, events, stamp, shuffle)
    return events


def _play(state: GameState, events: list[ev.Event], at: str | None, hand: Hand, seat: int,
          tile: Tile, end: str | None, expose: int | None) -> None:
    _record(state, events, at, ev.TILE_PLAYED, seat, {
        "tile": tile.text, "end": end, "expose": expose, "new_ends": hand.new_end_ids(tile, end),
    })
    _follow(state, events, at, hand, after_play(hand, seat))


def _pass(state: GameState, events: list[ev.Event], at: str | None, hand: Hand,
          seat: int) -> None:
    _record(state, events, at, ev.PASSED, seat, {})
    _follow(state, events, at, hand, after_pass(hand))


def _follow(state: GameState, events: list[ev.Event], at: str | None, hand: Hand,
            outcome: str | None) -> None:
    """Record what the move led to: an R18 lift, or the end of the hand (R19, R20)."""
    if outcome == LIFT:
        _record(state, events, at, ev.OBLIGATION_LIFTED, None, {"ends": list(hand.obligations)})
    elif outcome is not None:
        _end_hand(state, events, at, hand, outcome)


def _end_hand(state: GameState, events: list[ev.Event], at: str | None, hand: Hand,
              ended_by: str) -> None:
    scores, winner = hand_result(hand.tiles)  # R21, R22
    _record(state, events, at, ev.HAND_ENDED, None, {
        "hand_number": hand.number, "ended_by": ended_by, "points": scores, "winner": winner,
        "hands": [[t.text for t in held] for held in hand.tiles],
    })


def _after_hand(state: GameState, events: list[ev.Event], at: str | None,
                shuffle: Shuffle) -> None:
    last = state.scores[-1]
    if last["hand_number"] >= state.rules["hands"]:  # R23
        _record(state, events, at, ev.GAME_ENDED, None, {
            "totals": list(state.totals), "winners": match_winners(state.totals),
        })
    else:  # R6: the winner shuffles the next hand
        number = last["hand_number"] + 1
        _deal(state, events, at, number, last["winner"], shuffle(number))


def _deal(state: GameState, events: list[ev.Event], at: str | None, number: int, shuffler: int,
          shuffled: Shuffled) -> None:
    seats = state.seats
    k = tiles_per_hand(seats)
    texts = [t.text for t in shuffled.deck]
    data = {
        "hand_number": number, "opening_double": opening_double(number).text,
        "shuffler": shuffler, "deck": texts,
        "hands": [texts[s * k:(s + 1) * k] for s in range(seats)],
    }
    if shuffled.salt is not None:  # API.md "Fair shuffles"
        data |= {"salt": shuffled.salt, "commitment": commitment(shuffled.salt, texts)}
    _record(state, events, at, ev.HAND_STARTED, None, data)
    hand = state.hand
    assert hand is not None
    while hand.searching:  # R9: the server searches; the searcher keeps what it draws
        _record(state, events, at, ev.TILE_DRAWN, hand.turn,
                {"tile": hand.boneyard[0].text, "reason": "search"})
