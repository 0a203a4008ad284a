"""The ports the use cases work through (event store, turn queue, meter), and store helpers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Final, NamedTuple, Protocol

import orjson

Event = dict[str, Any]
"""`{seq, type, at, seat, data, hash}`, numbered and hashed by the caller."""

IDEMPOTENCY_TTL_S: Final = 24 * 3600
IDEMPOTENCY_KEYS_PER_SEAT: Final = 2000
"""The live Idempotency-Keys a seat may hold: more than the moves of the longest match."""
UNPLAYED_GAME_TTL_S: Final = 24 * 3600
"""How long a game no client has moved in is kept after its creation (0: for good)."""


class StoreError(Exception):
    """Something the event store refused or could not do."""


class ConcurrencyError(StoreError):
    """The game is not at the expected version: another writer appended first."""

    def __init__(self, current_version: int) -> None:
        super().__init__(f"the game is at version {current_version}")
        self.current_version = current_version


class StoreUnavailable(StoreError):
    """The store (or the queue) cannot serve now: unreachable, loading, its cluster failing."""


class StoreFull(StoreUnavailable):
    """The store is out of memory: it refuses writes (new games, moves), still serves reads."""


class KeyTaken(StoreError):
    """An append under a claim found its Idempotency-Key held or answered by another claim
    (this process was thought dead and its key taken over): `record` is the key's now."""

    def __init__(self, record: dict[str, Any]) -> None:
        super().__init__("another request holds or answered this Idempotency-Key")
        self.record = record


class KeyClaim(NamedTuple):
    """One request's claim of an Idempotency-Key: the key's name in the store, the hash of
    the request's body, and a nonce of the request's own that its pending record carries, so
    the request tells its own claim from any other (of its own process too)."""

    name: str
    body_hash: str
    nonce: str


class EventStore(Protocol):
    """An append-only log of events per game, with meta, one snapshot and idempotency records."""

    def create(self, game_id: str, events: list[Event], meta: dict[str, str], *,
               append_id: str | None = None, outbox: Sequence[str] = ()) -> bool:
        """Create a game with its first events and meta, and push the notifier's `outbox`
        entries in the same step, as `append` does (True if those marked a drain queued);
        raise StoreError if it exists, but return normally for a retry of this very creation
        (the same `append_id`, as `append`)."""

    def meta(self, game_id: str) -> dict[str, str]:
        """Return the game's meta (an empty dict for an unknown game)."""

    def append(self, game_id: str, expected_version: int, events: list[Event], *,
               snapshot: dict[str, Any] | None = None,
               idempotency: tuple[KeyClaim, str] | None = None,
               append_id: str | None = None, moved_in: bool = False,
               outbox: Sequence[str] = ()) -> bool:
        """Atomically append events at `expected_version`, with an optional snapshot and, for
        a claim, its key's final record (the claim, the record's JSON), and the notifier's
        `outbox` entries (`Notifier.entries`); return True if those marked a drain queued
        (the caller has the notifier queue it).

        A game is kept for good from its first append `moved_in` (a client's move); until
        then it is forgotten `unplayed_game_ttl_s` after its creation (a later read finds no
        such game). An append that ends the game (`game_ended`) closes its log: the store
        may keep it compacted, read as before, and a later append raises ConcurrencyError.

        `append_id`, made afresh for each append the caller attempts, is kept with the events:
        a retry of an append that landed though its reply was lost finds it at
        expected_version + 1 and returns normally, without writing anything again. Otherwise
        a log past `expected_version` raises ConcurrencyError. Then a key that another claim
        holds or answered by now raises KeyTaken, and nothing is written (its request may
        have appended the move already); a key still pending for the claim, or gone, is
        written."""

    def read(self, game_id: str, after: int = 0, until: int | None = None) -> list[Event]:
        """Return the events with after < seq <= until (None: to the end), in order."""

    def read_known(self, game_id: str, after: int) -> list[Event] | None:
        """Return the events after `after`, in order; None if there is no such game (one
        forgotten since, say: a state kept of it is no longer to be shown)."""

    def load(self, game_id: str) -> tuple[dict[str, Any] | None, list[Event]]:
        """Return the latest snapshot (or None) and every event after it, consistently."""

    def version(self, game_id: str) -> int:
        """Return the game's version: its number of events (0 for an unknown game)."""

    def idempotency_begin(self, claim: KeyClaim, ttl_pending: int = 30, *,
                          orphan: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """Claim the key as pending for this process and `claim` and return None, or return
        the record already there; a key found pending for this very claim counts as claimed
        (the claim's reply was lost and it was sent again). With `orphan`, a pending record
        this returned whose holder was found dead since, a key still holding that record is
        claimed over, atomically: its request died with it."""

    def holder_alive(self, holder: str) -> bool:
        """Return whether the process named `holder` by a pending record still runs."""

    def idempotency_finish(self, claim: KeyClaim, record_json: str) -> dict[str, Any] | None:
        """Store the final record of a request that appended nothing and return None; but if
        another claim holds or answered the key by now, return the record there."""

    def idempotency_admit(self, tally: str, name: str) -> int:
        """Count the key `name` among its seat's live keys (the set `tally`, each kept as long
        as a key's record) and return 0, also if it is counted already; but if the seat has
        as many as the store's cap (0: none), count nothing and return the seconds until the
        oldest expires."""

    def idempotency_abort(self, claim: KeyClaim) -> None:
        """Release a key that is still pending for `claim` (any other record is kept). It
        does not raise StoreUnavailable: a release the store cannot take now is made by this
        process once it can."""

    def wait_for_events(self, game_id: str, after: int, timeout_ms: int) -> list[Event]:
        """Return the events after `after`, blocking up to timeout_ms for one; [] on timeout."""

    def put_ticket(self, game_id: str, ticket_hash: str, token_hash: str, ttl_s: float) -> None:
        """Keep a stream ticket of the game, by its hash, for the seat token of `token_hash`,
        for `ttl_s` seconds."""

    def ticket_token(self, game_id: str, ticket_hash: str) -> str | None:
        """Return the token hash a live stream ticket of the game was kept for, else None."""

    def ping(self) -> bool:
        """Return whether the store can be reached."""


class TurnQueue(Protocol):
    """Where AI turns are sent: one job per game version."""

    def enqueue_turn(self, game_id: str, version: int, lane: str = "fast") -> None:
        """Queue the AI turn due at `version` in its lane (`fast` or `expert`: see
        ai_turns.lane), unless it is queued already (StoreUnavailable: not now)."""

    def heal_turn(self, game_id: str, version: int, lane: str = "fast") -> None:
        """Queue the AI turn due at `version` again if no live job of its lane holds it."""

    def schedule_clock(self, game_id: str, version: int, due: float) -> None:
        """Have the turn clock of the human turn due at `version` run out at `due` (a Unix
        time), unless it is scheduled already (StoreUnavailable: not now)."""

    def heal_clock(self, game_id: str, version: int, due: float) -> None:
        """Schedule the turn clock of `version` again if its job is lost."""


class Notifier(Protocol):
    """Where turn notifications (webhooks) go: a URL checked at creation, an outbox the
    queue's jobs deliver from (an append may put them there itself: `entries`), retries."""

    def refusal(self, url: str) -> str | None:
        """Return why `url` may not receive notifications (not https, a private address...),
        None if it may."""

    def send(self, game_id: str, webhook_id: str, body: dict[str, Any]) -> None:
        """Queue the delivery of one notification of the game (StoreUnavailable: not now)."""

    def entries(self, game_id: str, bodies: list[tuple[str, dict[str, Any]]]) -> list[str]:
        """Return the outbox entries of notifications (webhook-id, body) for the store to
        append with their events, if the notifier's outbox lives in the store; else none
        (they go through `send`)."""

    def queue_drain(self) -> None:
        """Queue the delivery of the entries an append put in the outbox."""


class NoNotifier:
    """A notifier that takes every URL and sends nothing: where no notifications go out."""

    def refusal(self, url: str) -> str | None:
        """Refuse nothing."""
        return None

    def send(self, game_id: str, webhook_id: str, body: dict[str, Any]) -> None:
        """Send nothing."""

    def entries(self, game_id: str, bodies: list[tuple[str, dict[str, Any]]]) -> list[str]:
        """Keep nothing in the store."""
        return []

    def queue_drain(self) -> None:
        """Queue nothing."""


class Meter(Protocol):
    """What the use cases measure: the time a game takes to load, and lost append races."""

    def replay_timer(self) -> AbstractContextManager[object]:
        """Return a context that times one load of a game (a cached state or a replay)."""

    def append_conflict(self) -> None:
        """Count one append that lost a race to another append (ConcurrencyError)."""

    def turn_not_queued(self) -> None:
        """Count one AI turn that could not be queued after its append (healed later)."""

    def timeout_fired(self) -> None:
        """Count one turn clock that ran out (API.md "Turn clocks")."""


class NoMeter:
    """A meter that measures nothing: the default where no metrics are kept."""

    def replay_timer(self) -> AbstractContextManager[object]:
        """Return a context that does nothing."""
        return nullcontext()

    def append_conflict(self) -> None:
        """Count nothing."""

    def turn_not_queued(self) -> None:
        """Count nothing."""

    def timeout_fired(self) -> None:
        """Count nothing."""


def dumps(value: Any) -> str:
    """Return the compact JSON the stores keep (UTF-8, not escaped to ASCII)."""
    return orjson.dumps(value).decode()


def loads(text: str | bytes) -> Any:
    """Return the value of JSON the stores keep. orjson refuses an escaped lone surrogate,
    which a kept 400 can hold (it names a field so named): the standard library reads that."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def pending_record(claim: KeyClaim, holder: str) -> str:
    """Return the JSON of the record of `claim` pending for the process named `holder`."""
    return dumps({"state": "pending", "body_hash": claim.body_hash, "holder": holder,
                  "nonce": claim.nonce})


def check_numbering(expected_version: int, events: list[Event]) -> None:
    """Raise StoreError unless the events are numbered expected_version+1, +2, ... in order."""
    seqs = [event.get("seq") for event in events]
    wanted = list(range(expected_version + 1, expected_version + 1 + len(events)))
    if seqs != wanted:
        raise StoreError(f"events must be numbered {wanted}, not {seqs}")


def check_creation(events: list[Event]) -> None:
    """Raise StoreError unless the events can open a game: at least one, numbered from 1."""
    if not events:
        raise StoreError("a game starts with at least one event")
    check_numbering(0, events)
