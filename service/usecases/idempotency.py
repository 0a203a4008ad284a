"""Idempotency-Key records: a seat's key claims a move, and keeps its first answer 24 hours."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from service.game import events as ev
from service.usecases.errors import KeyPending, KeyReused, Refusal
from service.usecases.ports import EventStore


def body_hash(body: Any) -> str:
    """Return the hash of a request body's JSON value, independent of key order and spacing."""
    return hashlib.sha256(ev.canonical_json(body)).hexdigest()


def key_name(game_id: str, seat: int, key: str) -> str:
    """Return the store's name for a seat's Idempotency-Key record (in the game's slot)."""
    return f"game:{{{game_id}}}:idem:{seat}:{body_hash({'k': key})}"


def claim(store: EventStore, name: str, digest: str) -> int | None:
    """Claim the key for a body of hash `digest` and return None; or, if the key has answered
    that body before, return the version its move made or raise the refusal it answered.
    A key left pending for this body by a process that died is claimed over at once: its
    request appended nothing (an append writes the key's final record in the same step)."""
    record = store.idempotency_begin(name, digest)
    if record is not None and _orphaned(store, record, digest):
        record = store.idempotency_begin(name, digest, dead_holder=record["holder"])
    return None if record is None else answer(record, digest)


def answer(record: dict[str, Any], digest: str) -> int:
    """Return the version the move of a key's `record` made, or raise the refusal it answered:
    KeyReused if the key came with another body, KeyPending while its first request runs."""
    if record.get("body_hash") != digest:
        raise KeyReused("this Idempotency-Key was sent with another body")
    if record.get("state") == "pending":
        raise KeyPending("a request with this Idempotency-Key is still being handled")
    if "refusal" in record:
        raise Refusal.from_record(record["refusal"])
    version: int = record["version"]
    return version


def applied(digest: str, version: int) -> str:
    """Return the record of a key whose move was appended, making `version` (appended with it)."""
    return json.dumps({"state": "done", "body_hash": digest, "version": version})


def refused(store: EventStore, name: str, digest: str, refusal: Refusal) -> int | None:
    """Keep `refusal` as the key's answer (its request appended nothing) and return None; but
    if another process took the key over meanwhile (this one was thought dead), answer as
    that key's record does now (`answer`), never replacing it."""
    record = {"state": "done", "body_hash": digest, "refusal": refusal.to_record()}
    there = store.idempotency_finish(name, json.dumps(record))
    return None if there is None else answer(there, digest)


def _orphaned(store: EventStore, record: dict[str, Any], digest: str) -> bool:
    """Whether `record` is this body's claim by a process that is no longer alive."""
    holder = record.get("holder")
    return (record.get("state") == "pending" and record.get("body_hash") == digest
            and holder is not None and not store.holder_alive(holder))
