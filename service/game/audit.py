"""Offline audit of an exported log: the hash chain, every deck's commitment, then every event
re-decided (R26)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from service.game import events as ev
from service.game.fairness import Shuffled, commitment_holds
from service.game.lifecycle import LifecycleError, leave, time_out
from service.game.state import Match
from service.game.variant import Variant
from service.game.variants import variant_of
from service.rules.errors import RuleError
from service.rules.moves import DRAW, PASS, Move
from service.rules.tiles import Tile

ACTIONS = (ev.TILE_PLAYED, ev.TILE_DRAWN, ev.PASSED)
DECIDED = (*ACTIONS, ev.TURN_TIMED_OUT, ev.SEAT_LEFT)
"""The events that open a decision: a move, a timeout (and the move made for it), a leave."""


@dataclass(frozen=True)
class Finding:
    """The first event that does not check out, and why."""

    seq: int
    reason: str

    def __str__(self) -> str:
        return f"event {self.seq}: {self.reason}"


def audit(events: Sequence[ev.Event]) -> Finding | None:
    """Return the first bad event of a complete log, or None when it all checks out."""
    broken = ev.first_broken_link(list(events))
    if broken is not None:
        return Finding(broken, "the hash chain breaks here (altered, inserted or removed)")
    if not events or events[0]["type"] != ev.GAME_CREATED:
        return Finding(1, "a log starts with game_created")
    checker = _Checker(events)
    try:
        return checker.run()
    except (KeyError, TypeError, ValueError, IndexError) as error:
        return Finding(checker.pos + 1, f"malformed event ({error!r})")


class _Checker:
    """Re-decides a log move by move with its own decks and compares what it records."""

    def __init__(self, events: Sequence[ev.Event]) -> None:
        self.events, self.pos = events, 0

    def run(self) -> Finding | None:
        started = [e for e in self.events if e["type"] == ev.HAND_STARTED]
        broken = next((e for e in started if not commitment_holds(e["data"])), None)
        if broken is not None:  # API.md "Fair shuffles"
            return Finding(broken["seq"], f"hand {broken['data']['hand_number']}'s deck and "
                                          "salt do not match its commitment")
        first = self.events[0]
        variant = variant_of(first["data"]["rules"])
        decks = {e["data"]["hand_number"]: Shuffled(_deck(e, variant.tiles),
                                                     e["data"].get("salt"))
                 for e in started}
        for drawn in (e for e in self.events if e["type"] == variant.leader_draw):  # F4
            decks[0] = Shuffled(_deck(drawn, variant.tiles, "tiles"))
        state, produced = variant.create_game(first["data"]["players"],
                                              first["data"]["rules"], decks.__getitem__,
                                              first["at"])
        finding = self._compare(produced)
        while finding is None and self.pos < len(self.events):
            event = self.events[self.pos]
            if state.status == "finished" or event["type"] not in DECIDED:
                return Finding(event["seq"], f"{event['type']} does not follow from the log")
            try:
                produced = self._decide(variant, state, event, decks)
            except RuleError as error:
                return Finding(event["seq"], f"an illegal move ({error.detail})")
            except LifecycleError as error:
                return Finding(event["seq"], f"{event['type']} is not allowed here ({error})")
            finding = self._compare(produced)
        if finding is None and state.status != "finished":
            return Finding(len(self.events), "the match never ended")
        return finding

    def _decide(self, variant: Variant, state: Match[Any], event: ev.Event,
                decks: dict[int, Shuffled]) -> list[ev.Event]:
        """Re-decide the decision `event` opens on `state`; return the events it records."""
        if event["type"] == ev.TURN_TIMED_OUT:  # API.md "Turn clocks": the move follows it
            return time_out(state, _move(self.events[self.pos + 1]), decks.__getitem__,
                            event["at"])
        if event["type"] == ev.SEAT_LEFT:
            return leave(state, event["seat"], event["data"]["level"], event["at"])
        return variant.make_move(state, event["seat"], _move(event), decks.__getitem__,
                                 event["at"])

    def _compare(self, produced: list[ev.Event]) -> Finding | None:
        for mine in produced:
            if self.pos >= len(self.events):
                return Finding(self.pos + 1, f"the log ends before {mine['type']}")
            theirs = self.events[self.pos]
            if mine != theirs:
                return Finding(theirs["seq"], f"the engine records {mine['type']} here, "
                                              "not this event")
            self.pos += 1
        return None


def _deck(event: ev.Event, tiles: Sequence[Tile], key: str = "deck") -> list[Tile]:
    """The event's deck: all of the variant's `tiles` once each (R5, F3); a leader draw's
    `tiles`: some of them, once each (F4)."""
    deck = [Tile.parse(t) for t in event["data"][key]]
    indexes = sorted(t.index for t in deck)
    if not set(deck) <= set(tiles) or len(set(indexes)) != len(deck) or (
            key == "deck" and len(deck) != len(tiles)):
        raise ValueError(f"event {event['seq']}'s {key} is not of the {len(tiles)} tiles")
    return deck


def _move(event: ev.Event) -> Move:
    if event["type"] == ev.TILE_DRAWN:
        return DRAW
    if event["type"] == ev.PASSED:
        return PASS
    data = event["data"]
    return Move("play", Tile.parse(data["tile"]), data["end"], data["expose"])
