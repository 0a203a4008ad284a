"""Event records and their hash chain (API.md "Events")."""

from __future__ import annotations

import hashlib
from typing import Any, Final

import orjson

Event = dict[str, Any]
"""`{seq, type, at, seat, data, hash}` once recorded; `{type, seat, data}` while decided."""

GENESIS: Final = "0" * 64

GAME_CREATED: Final = "game_created"
HAND_STARTED: Final = "hand_started"
TILE_DRAWN: Final = "tile_drawn"
TILE_PLAYED: Final = "tile_played"
PASSED: Final = "passed"
OBLIGATION_LIFTED: Final = "obligation_lifted"
HAND_ENDED: Final = "hand_ended"
GAME_ENDED: Final = "game_ended"
TURN_TIMED_OUT: Final = "turn_timed_out"
SEAT_LEFT: Final = "seat_left"


def canonical_json(value: Any) -> bytes:
    """Return the canonical JSON of API.md: keys sorted, no spaces, UTF-8."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def event_hash(prev_hash: str, event: Event) -> str:
    """Return hex SHA-256 of the previous hash followed by the event's canonical JSON."""
    body = {k: v for k, v in event.items() if k != "hash"}
    return hashlib.sha256(prev_hash.encode() + canonical_json(body)).hexdigest()


def seal(event: Event, seq: int, at: str, prev_hash: str) -> Event:
    """Return the decided event numbered `seq`, stamped `at` and chained to `prev_hash`."""
    sealed: Event = {"seq": seq, "type": event["type"], "at": at,
                     "seat": event.get("seat"), "data": event["data"]}
    sealed["hash"] = event_hash(prev_hash, sealed)
    return sealed


def first_broken_link(events: list[Event]) -> int | None:
    """Return the seq of the first event whose numbering or hash breaks the chain, else None."""
    prev = GENESIS
    for expected_seq, event in enumerate(events, start=1):
        if event.get("seq") != expected_seq or event.get("hash") != event_hash(prev, event):
            return expected_seq
        prev = event["hash"]
    return None
