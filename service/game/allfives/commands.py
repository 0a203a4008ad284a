"""All Fives commands: check a move against F1-F16 and record the events it causes."""

from __future__ import annotations

from typing import Any

from service.game import events as ev
from service.game.allfives.hand import FivesHand, tiles_per_seat
from service.game.allfives.scoring import first_leader, hand_points, next_leader, play_points
from service.game.allfives.state import LEADER_DRAWN, FivesState
from service.game.allfives.state import record as _record
from service.game.allfives.turns import check_move
from service.game.commands import Shuffle, refuse_after_the_end
from service.game.fairness import Shuffled, commitment
from service.rules.errors import OutOfTurn
from service.rules.moves import Move
from service.rules.outcomes import BLOCKED, DOMINO
from service.rules.tiles import TEXT, Tile

TARGET = "target"
"""F15: a play's points reached the target; the hand and the match end (as `ended_by`)."""

LEADER_DECK = 0
"""The hand number the Shuffle is asked for the set the first leader is drawn from (F4)."""


def create_game(players: list[dict[str, Any]], rules: dict[str, Any], shuffle: Shuffle,
                at: str, *, sealed: bool = True) -> tuple[FivesState, list[ev.Event]]:
    """Record a new match, the draw for the first leader (F4, from `shuffle(0)`) and the
    first hand. `sealed=False` records unsealed events, for simulations."""
    state, stamp = FivesState(), at if sealed else None
    events: list[ev.Event] = []
    _record(state, events, stamp, ev.GAME_CREATED, None, {"players": players, "rules": rules})
    drawn = list(shuffle(LEADER_DECK).deck[:len(players)])
    _record(state, events, stamp, LEADER_DRAWN, None, {"tiles": [t.text for t in drawn]})
    _deal(state, events, stamp, 1, first_leader(drawn), shuffle(1))
    return state, events


def make_move(state: FivesState, seat: int, move: Move, shuffle: Shuffle,
              at: str, *, sealed: bool = True) -> list[ev.Event]:
    """Check `move` for `seat`, record what follows from it, and return the new events."""
    refuse_after_the_end(state)
    hand = state.hand
    if hand is None or state.hand_over:
        raise OutOfTurn("F2", "no seat is to move now")
    action, tile, end, expose = check_move(hand, seat, move)
    events: list[ev.Event] = []
    stamp = at if sealed else None  # no recorder object per move: this path is hot
    if action == "play":
        assert tile is not None
        _play(state, events, stamp, hand, seat, tile, end, expose)
        if not hand.tiles[seat] and state.status == "playing":  # F12: a domino
            _end_hand(state, events, stamp, hand, DOMINO, shuffle)
    elif action == "draw":
        _record(state, events, stamp, ev.TILE_DRAWN, seat,
                {"tile": hand.boneyard[0].text, "reason": "draw"})
    else:
        _record(state, events, stamp, ev.PASSED, seat, {})
        if hand.blocked:
            _end_hand(state, events, stamp, hand, BLOCKED, shuffle)
    return events


def _play(state: FivesState, events: list[ev.Event], at: str | None, hand: FivesHand,
          seat: int, tile: Tile, end: str | None, expose: int | None) -> None:
    """Record the play and its points (F9, F10); a reached target ends the hand and the
    match (F15)."""
    points = play_points(hand.count_after(tile, end, expose))
    _record(state, events, at, ev.TILE_PLAYED, seat, {
        "tile": tile.text, "end": end, "expose": expose,
        "new_ends": hand.new_end_ids(tile, end), "points": points})
    if points and state.target_reached:  # this play's points: no total was there before
        _record(state, events, at, ev.HAND_ENDED, None, _ended(hand, TARGET, seat,
                                                               [0] * hand.seats))
        _record(state, events, at, ev.GAME_ENDED, None,
                {"totals": list(state.totals), "winners": [seat]})


def _end_hand(state: FivesState, events: list[ev.Event], at: str | None, hand: FivesHand,
              ended_by: str, shuffle: Shuffle) -> None:
    """Score the hand's end (F12-F14); the match ends once a total reaches the target (F15),
    else the next hand is dealt, led by the winner or the same leader (F5)."""
    winner, points = hand_points(hand.tiles)
    _record(state, events, at, ev.HAND_ENDED, None, _ended(hand, ended_by, winner, points))
    if winner is not None and state.target_reached:  # F15, by the winner's points
        _record(state, events, at, ev.GAME_ENDED, None,
                {"totals": list(state.totals), "winners": [winner]})
    else:
        number = hand.number + 1
        _deal(state, events, at, number, next_leader(winner, hand.leader), shuffle(number))


def _ended(hand: FivesHand, ended_by: str, winner: int | None, points: list[int]
           ) -> dict[str, Any]:
    return {"hand_number": hand.number, "ended_by": ended_by, "points": points,
            "winner": winner, "hands": [list(map(TEXT, held)) for held in hand.tiles]}


def _deal(state: FivesState, events: list[ev.Event], at: str | None, number: int,
          leader: int, shuffled: Shuffled) -> None:
    """Record a hand's deal (F3) with its commitment (API.md "Fair shuffles"): the fields
    API.md lists for every `hand_started` (F16: events as in API.md), `opening_double` and
    `shuffler` null (All Fives has no opening double, and no seat shuffles: F3), then the
    hand's `leader` (F4, F5)."""
    seats = state.seats
    k = tiles_per_seat(seats)
    texts = list(map(TEXT, shuffled.deck))
    data: dict[str, Any] = {
        "hand_number": number, "opening_double": None, "shuffler": None, "leader": leader,
        "deck": texts, "hands": [texts[s * k:(s + 1) * k] for s in range(seats)]}
    if shuffled.salt is not None:
        data |= {"salt": shuffled.salt, "commitment": commitment(shuffled.salt, texts)}
    _record(state, events, at, ev.HAND_STARTED, None, data)
