"""All Fives commands: check a move against F1-F16 and record the events it causes."""

from __future__ import annotations

from typing import Any

from service.game import events as ev
from service.game.allfives.state import LEADER_DRAWN, FivesState, evolve
from service.game.commands import Shuffle
from service.game.fairness import Shuffled, commitment
from service.rules.allfives.hand import FivesHand, tiles_per_seat
from service.rules.allfives.scoring import first_leader, hand_points, next_leader, play_points
from service.rules.allfives.turns import check_move
from service.rules.errors import OutOfTurn
from service.rules.moves import Move
from service.rules.outcomes import BLOCKED, DOMINO
from service.rules.tiles import Tile

TARGET = "target"
"""F15: a play's points reached the target; the hand and the match end (as `ended_by`)."""

LEADER_DECK = 0
"""The hand number the Shuffle is asked for the set the first leader is drawn from (F4)."""


class _Recorder:
    """Folds each decided event into the state at once and keeps it: sealed (seq, time
    `at`, hash), or unsealed (`{type, seat, data}`) when `at` is None, for simulations."""

    __slots__ = ("state", "at", "events")

    def __init__(self, state: FivesState, at: str | None) -> None:
        self.state, self.at = state, at
        self.events: list[ev.Event] = []

    def __call__(self, type_: str, seat: int | None, data: dict[str, Any]) -> None:
        event: ev.Event = {"type": type_, "seat": seat, "data": data}
        if self.at is not None:
            event = ev.seal(event, self.state.version + 1, self.at, self.state.last_hash)
        evolve(self.state, event)
        self.events.append(event)


def create_game(players: list[dict[str, Any]], rules: dict[str, Any], shuffle: Shuffle,
                at: str, *, sealed: bool = True) -> tuple[FivesState, list[ev.Event]]:
    """Record a new match, the draw for the first leader (F4, from `shuffle(0)`) and the
    first hand. `sealed=False` records unsealed events, for simulations."""
    record = _Recorder(FivesState(), at if sealed else None)
    record(ev.GAME_CREATED, None, {"players": players, "rules": rules})
    drawn = list(shuffle(LEADER_DECK).deck[:len(players)])
    record(LEADER_DRAWN, None, {"tiles": [t.text for t in drawn]})
    _deal(record, 1, first_leader(drawn), shuffle(1))
    return record.state, record.events


def make_move(state: FivesState, seat: int, move: Move, shuffle: Shuffle,
              at: str, *, sealed: bool = True) -> list[ev.Event]:
    """Check `move` for `seat`, record what follows from it, and return the new events."""
    if state.status != "playing":
        raise OutOfTurn("F15", "the match has ended and accepts no more moves")
    hand = state.hand
    if hand is None or state.hand_over:
        raise OutOfTurn("F2", "no seat is to move now")
    action, tile, end, expose = check_move(hand, seat, move)
    record = _Recorder(state, at if sealed else None)
    if action == "play":
        assert tile is not None
        _play(record, hand, seat, tile, end, expose, shuffle)
    elif action == "draw":
        record(ev.TILE_DRAWN, seat, {"tile": hand.boneyard[0].text, "reason": "draw"})
    else:
        record(ev.PASSED, seat, {})
        if hand.blocked:
            _end_hand(record, hand, BLOCKED, shuffle)
    return record.events


def _play(record: _Recorder, hand: FivesHand, seat: int, tile: Tile, end: str | None,
          expose: int | None, shuffle: Shuffle) -> None:
    """Record the play and its points (F9, F10); then a reached target (F15) or a domino
    (F12) ends the hand."""
    points = play_points(hand.count_after(tile, end, expose))
    record(ev.TILE_PLAYED, seat, {"tile": tile.text, "end": end, "expose": expose,
                                  "new_ends": hand.new_end_ids(tile, end), "points": points})
    state = record.state
    if points and state.totals[seat] >= state.target:
        record(ev.HAND_ENDED, None, _ended(hand, TARGET, seat, [0] * hand.seats))
        record(ev.GAME_ENDED, None, {"totals": list(state.totals), "winners": [seat]})
    elif not hand.tiles[seat]:
        _end_hand(record, hand, DOMINO, shuffle)


def _end_hand(record: _Recorder, hand: FivesHand, ended_by: str, shuffle: Shuffle) -> None:
    """Score the hand's end (F12-F14); the match ends once a total reaches the target (F15),
    else the next hand is dealt, led by the winner or the same leader (F5)."""
    winner, points = hand_points(hand.tiles)
    record(ev.HAND_ENDED, None, _ended(hand, ended_by, winner, points))
    state = record.state
    if winner is not None and state.totals[winner] >= state.target:
        record(ev.GAME_ENDED, None, {"totals": list(state.totals), "winners": [winner]})
    else:
        _deal(record, hand.number + 1, next_leader(winner, hand.leader), shuffle(hand.number + 1))


def _ended(hand: FivesHand, ended_by: str, winner: int | None, points: list[int]
           ) -> dict[str, Any]:
    return {"hand_number": hand.number, "ended_by": ended_by, "points": points,
            "winner": winner, "hands": [[t.text for t in held] for held in hand.tiles]}


def _deal(record: _Recorder, number: int, leader: int, shuffled: Shuffled) -> None:
    """Record a hand's deal (F3) with its commitment (API.md "Fair shuffles")."""
    seats = record.state.seats
    k = tiles_per_seat(seats)
    texts = [t.text for t in shuffled.deck]
    data = {"hand_number": number, "leader": leader, "deck": texts,
            "hands": [texts[s * k:(s + 1) * k] for s in range(seats)]}
    if shuffled.salt is not None:
        data |= {"salt": shuffled.salt, "commitment": commitment(shuffled.salt, texts)}
    record(ev.HAND_STARTED, None, data)
