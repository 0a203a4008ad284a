"""What one seat, or a spectator, may see of the game and its log (R25)."""

from __future__ import annotations

from typing import Any, Final

from service.game import events as ev
from service.game.lifecycle import deadline_text
from service.game.state import Match
from service.game.variants import variant_of


def view(state: Match[Any], seat: int | None) -> dict[str, Any]:
    """Return the state as `seat` may see it (None: a spectator): own tiles, table, counts;
    of either variant (an All Fives hand has no opening double nor obligations, F16)."""
    return {**table(state), **own(state, seat)}


def table(state: Match[Any]) -> dict[str, Any]:
    """Return what every seat and spectator sees: the layout, counts, totals, whose turn."""
    hand = state.hand
    return {
        "version": state.version, "status": state.status, "rules": state.rules,
        "hand_number": hand.number if hand else None,
        "opening_double": hand.opening_double.text if hand and hand.opening_double else None,
        "turn": state.turn, "boneyard_count": len(hand.boneyard) if hand else 0,
        "layout": _layout(state), "obligations": _obligations(state),
        "players": [_player(state, s) for s in range(state.seats)],
        "scores": list(state.scores), "winners": list(state.winners),
        "turn_deadline": deadline_text(state),
    }


def own(state: Match[Any], seat: int | None) -> dict[str, Any]:
    """Return what only `seat` sees (nothing for a spectator): its tiles and legal moves."""
    if seat is None:
        return {}
    hand = state.hand
    moves = (variant_of(state.rules).legal_moves(hand, seat)
             if hand and state.turn == seat and not state.awaiting_server else [])
    return {"seat": seat, "hand": [t.text for t in hand.tiles[seat]] if hand else [],
            "legal_moves": [m.to_dict() for m in moves]}


def _obligations(state: Match[Any]) -> list[str]:
    """The ends a play must go on now (R17): none while no seat is to move (the match over,
    or between a hand's end and the next deal), since no play is to be made then."""
    hand = state.hand
    return list(hand.obligations) if hand and state.turn is not None else []


def _layout(state: Match[Any]) -> dict[str, Any]:
    hand = state.hand
    if hand is None:
        return {"tiles": [], "ends": []}
    return {
        "tiles": [{"tile": t.text, "end": end, "expose": x} for t, end, x in hand.layout],
        "ends": [{"id": end, "value": value} for end, value in hand.ends.items()],
    }


def _player(state: Match[Any], seat: int) -> dict[str, Any]:
    """A seat as the answer lists it (PlayerOut's keys, in its order); `level` for an AI."""
    player = state.players[seat]
    held = state.hand.tiles[seat] if state.hand else []
    level = {"level": player["level"]} if "level" in player else {}
    return {"seat": seat, "name": player["name"], "kind": player["kind"], **level,
            "tile_count": len(held), "total": state.totals[seat]}


HIDDEN_AT_START: Final = ("deck", "salt", "hands")
"""What a redacted `hand_started` leaves out (its `commitment` stays: API.md "Fair shuffles")."""


def redact(event: ev.Event, seat: int | None) -> ev.Event:
    """Return the event as `seat` may see it before the match ends: no hidden tile, no hash."""
    data = event["data"]
    if event["type"] == ev.HAND_STARTED:
        data = {k: v for k, v in data.items() if k not in HIDDEN_AT_START}
        if seat is not None:  # its own dealt tiles only; other seats' are left out
            data["hands"] = [h if s == seat else None for s, h in enumerate(event["data"]["hands"])]
    elif event["type"] == ev.TILE_DRAWN and event["seat"] != seat:
        data = {k: v for k, v in data.items() if k != "tile"}
    return {k: v for k, v in event.items() if k not in ("hash", "data")} | {"data": data}


def visible_log(events: list[ev.Event], seat: int | None, finished: bool) -> list[ev.Event]:
    """Return the log for `seat`: complete once the match has ended, else redacted (R25)."""
    return list(events) if finished else [redact(e, seat) for e in events]
