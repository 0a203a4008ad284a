"""The compact form of a finished game's log, kept in one Redis string instead of its stream.

`<version>:<base64 of zlib level 9 of the JSON {"chained": bool, "events": [...]}>`. When the
events' hashes form the chain of API.md, they are left out and rebuilt on reading (each is a
function of the one before and its event): they are a third of the JSON and do not compress.
A log whose chain does not hold keeps them as they are, so reading gives back exactly what
was written. Base64 keeps the value text, which a client that decodes responses reads too.
"""

from __future__ import annotations

import base64
import zlib
from typing import Final

from service.game import events as ev
from service.usecases.ports import Event, dumps, loads

LEVEL: Final = 9


def pack(events: list[Event]) -> str:
    """Return the compact form of a whole log (events 1..n, in order)."""
    chained = ev.first_broken_link(events) is None
    kept = [_unhashed(event) for event in events] if chained else events
    body = dumps({"chained": chained, "events": kept}).encode()
    return f"{len(events)}:" + base64.b64encode(zlib.compress(body, LEVEL)).decode()


def unpack(packed: str | bytes) -> list[Event]:
    """Return the events of a compact log, each as it was appended (its hash rebuilt)."""
    text = packed.decode() if isinstance(packed, bytes) else packed
    body = loads(zlib.decompress(base64.b64decode(text.partition(":")[2])))
    events: list[Event] = body["events"]
    if body["chained"]:
        previous = ev.GENESIS
        for event in events:
            event["hash"] = previous = ev.event_hash(previous, event)
    return events


def _unhashed(event: Event) -> Event:
    return {name: value for name, value in event.items() if name != "hash"}
