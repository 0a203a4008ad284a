"""Idempotency-Key records: a seat's key claims a move, and keeps its first answer 24 hours."""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Any, Final

from service.game import events as ev
from service.usecases.errors import KeyPending, KeyReused, Refusal, TooManyKeys
from service.usecases.ports import EventStore, KeyClaim

RETRY_PENDING_S: Final = 1
"""The Retry-After of a 409 for a key whose first request is still being handled: a holder
that died is seen dead within a few seconds (adapters.liveness.ALIVE_MS), then its key is
taken over by the next try."""


def body_hash(body: Any) -> str:
    """Return the hash of a request body's JSON value, independent of key order and spacing."""
    return hashlib.sha256(ev.canonical_json(body)).hexdigest()


def key_name(game_id: str, seat: int, key: str) -> str:
    """Return the store's name for a seat's Idempotency-Key record (in the game's slot)."""
    return f"game:{{{game_id}}}:idem:{seat}:{body_hash({'k': key})}"


def new_claim(game_id: str, seat: int, key: str, digest: str) -> KeyClaim:
    """Return a request's claim of a seat's Idempotency-Key for a body of hash `digest`,
    with a nonce of its own."""
    return KeyClaim(key_name(game_id, seat, key), digest, secrets.token_hex(8))


def claim(store: EventStore, key: KeyClaim) -> int | None:
    """Claim the key for the request and return None; or, if the key has answered its body
    before, return the version its move made or raise the refusal it answered.

    While the key is pending for this body in a live process's name, its first request is
    still being handled: KeyPending (409, API.md "Moves"), at once. A key left pending by a
    process that died is claimed over: its request appended nothing (an append writes the
    key's final record in the same step). A key new to the seat is released again and
    refused (TooManyKeys) if the seat holds its cap of live keys."""
    record = store.idempotency_begin(key)
    while (record is not None and _pending_for(record, key.body_hash)
           and _holder_dead(store, record)):
        record = store.idempotency_begin(key, orphan=record)
    if record is None:
        _admit(store, key)
        return None
    return answer(record, key.body_hash)


def _admit(store: EventStore, key: KeyClaim) -> None:
    """Count the key just claimed among its seat's, or release it and raise TooManyKeys: a
    seat's keys are capped, not only by their 24 hours (a cap, not a drop of the oldest,
    so that every key kept still answers as API.md promises)."""
    tally = key.name.rpartition(":")[0]  # `key_name` without the key's hash: the seat's
    wait_s = store.idempotency_admit(tally, key.name)
    if wait_s:
        store.idempotency_abort(key)
        raise TooManyKeys(f"this seat holds as many Idempotency-Keys as it may; a new one "
                          f"is taken in {wait_s} s, or send a move without one",
                          retry_after=wait_s)


def answer(record: dict[str, Any], digest: str) -> int:
    """Return the version the move of a key's `record` made, or raise the refusal it answered:
    KeyReused if the key came with another body, KeyPending while its first request runs."""
    if record.get("body_hash") != digest:
        raise KeyReused("this Idempotency-Key was sent with another body")
    if record.get("state") == "pending":
        raise KeyPending("a request with this Idempotency-Key is still being handled",
                         retry_after=RETRY_PENDING_S)
    if "refusal" in record:
        raise Refusal.from_record(record["refusal"])
    version: int = record["version"]
    return version


def applied(digest: str, version: int) -> str:
    """Return the record of a key whose move was appended, making `version` (appended with it)."""
    return json.dumps({"state": "done", "body_hash": digest, "version": version})


def refused(store: EventStore, key: KeyClaim, refusal: Refusal) -> int | None:
    """Keep `refusal` as the key's answer (its request appended nothing) and return None; but
    if another process took the key over meanwhile (this one was thought dead), answer as
    that key's record does now (`answer`), never replacing it."""
    record = {"state": "done", "body_hash": key.body_hash, "refusal": refusal.to_record()}
    there = store.idempotency_finish(key, json.dumps(record))
    return None if there is None else answer(there, key.body_hash)


def _pending_for(record: dict[str, Any], digest: str) -> bool:
    """Whether `record` is a claim, still pending, of a body of hash `digest`."""
    return record.get("state") == "pending" and record.get("body_hash") == digest


def _holder_dead(store: EventStore, record: dict[str, Any]) -> bool:
    """Whether the process that holds the pending `record` is no longer alive."""
    holder = record.get("holder")
    return holder is not None and not store.holder_alive(holder)
