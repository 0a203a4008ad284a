"""An in-memory event store with the Redis store's behaviour, for pure unit tests."""

from __future__ import annotations

import copy
import itertools
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from service.usecases.ports import (
    IDEMPOTENCY_KEYS_PER_SEAT,
    IDEMPOTENCY_TTL_S,
    UNPLAYED_GAME_TTL_S,
    ConcurrencyError,
    Event,
    KeyClaim,
    KeyTaken,
    StoreError,
    check_creation,
    check_numbering,
    dumps,
    loads,
    pending_record,
)

_HOLDERS = itertools.count(1)


def _new_holder() -> str:
    """Return a holder name no other in-memory store has."""
    return f"memory:{next(_HOLDERS)}"


@dataclass
class _Game:
    events: list[str] = field(default_factory=list)
    meta: dict[str, str] = field(default_factory=dict)
    snapshot: str | None = None
    append_ids: dict[int, str] = field(default_factory=dict)  # first seq -> its append's id
    expiry: float | None = None  # monotonic; None: kept for good
    closed: bool = False  # its game ended: the log takes no more events


class InMemoryEventStore:
    """A thread-safe EventStore in process memory; values are kept as JSON, like in Redis."""

    def __init__(self, *, idempotency_ttl_s: int = IDEMPOTENCY_TTL_S,
                 idempotency_keys_per_seat: int = IDEMPOTENCY_KEYS_PER_SEAT,
                 unplayed_game_ttl_s: float = UNPLAYED_GAME_TTL_S) -> None:
        self._ttl = idempotency_ttl_s
        self._unplayed_ttl = unplayed_game_ttl_s
        self._keys_per_seat = idempotency_keys_per_seat
        self._tallies: dict[str, dict[str, float]] = {}  # a seat's keys -> monotonic expiry
        self._games: dict[str, _Game] = {}
        self._keys: dict[str, tuple[str, float]] = {}  # name -> (value, monotonic expiry)
        self.outbox: list[str] = []  # the notifications' entries appended with events
        self._lock = threading.Lock()
        self._appended = threading.Condition(self._lock)
        self.holder = _new_holder()
        self._alive = {self.holder}  # the holders of this store and its siblings not closed

    def create(self, game_id: str, events: list[Event], meta: dict[str, str], *,
               append_id: str | None = None, outbox: Sequence[str] = ()) -> bool:
        """Create a game with its first events and meta, and `outbox` entries (kept in
        `outbox`, True if any); raise StoreError if it exists (but a retry of this very
        creation, by `append_id`, returns normally: False)."""
        check_creation(events)
        with self._appended:
            if game_id in self._live_games():
                if append_id and self._games[game_id].append_ids.get(1) == append_id:
                    return False
                raise StoreError(f"the game {game_id!r} exists")
            expiry = time.monotonic() + self._unplayed_ttl if self._unplayed_ttl else None
            self._games[game_id] = _Game([dumps(e) for e in events], dict(meta),
                                         append_ids={1: append_id} if append_id else {},
                                         expiry=expiry)
            self.outbox.extend(outbox)
            self._appended.notify_all()
            return bool(outbox)

    def meta(self, game_id: str) -> dict[str, str]:
        """Return the game's meta (an empty dict for an unknown game)."""
        with self._lock:
            return dict(self._game(game_id).meta)

    def append(self, game_id: str, expected_version: int, events: list[Event], *,
               snapshot: dict[str, Any] | None = None,
               idempotency: tuple[KeyClaim, str] | None = None,
               append_id: str | None = None, moved_in: bool = False,
               outbox: Sequence[str] = ()) -> bool:
        """Atomically append events at `expected_version`, with an optional snapshot and, for
        a claim, its key's final record, and `outbox` entries (kept in `outbox`, True if
        any); a retry that finds this `append_id` at expected_version + 1 returns normally;
        a key another claim took raises KeyTaken. A client's move (`moved_in`) keeps the
        game for good; a game's end closes its log."""
        check_numbering(expected_version, events)
        with self._appended:
            game = self._live_games().get(game_id)
            if game is None:
                raise StoreError(f"there is no game {game_id!r}")
            if game.closed:
                raise ConcurrencyError(len(game.events))
            if len(game.events) != expected_version:
                if append_id and game.append_ids.get(expected_version + 1) == append_id:
                    return False  # this very append landed; its snapshot and record with it
                raise ConcurrencyError(len(game.events))
            there = None if idempotency is None else self._theirs(idempotency[0])
            if there is not None:
                raise KeyTaken(loads(there))
            if append_id and events:
                game.append_ids[expected_version + 1] = append_id
            game.events.extend(dumps(e) for e in events)
            game.closed = any(e["type"] == "game_ended" for e in events)
            if moved_in:
                game.expiry = None
            if snapshot is not None:
                game.snapshot = dumps(snapshot)
            if idempotency is not None:
                self._set(idempotency[0].name, idempotency[1], self._ttl)
            self.outbox.extend(outbox)
            self._appended.notify_all()
            return bool(outbox)

    def read(self, game_id: str, after: int = 0, until: int | None = None) -> list[Event]:
        """Return the events with after < seq <= until (None: to the end), in order."""
        with self._lock:
            stop = None if until is None else max(until, 0)
            return [loads(e) for e in self._game(game_id).events[max(after, 0):stop]]

    def read_known(self, game_id: str, after: int) -> list[Event] | None:
        """Return the events after `after`, in order; None if there is no such game."""
        with self._lock:
            game = self._live_games().get(game_id)
            return None if game is None else [loads(e) for e in game.events[max(after, 0):]]

    def load(self, game_id: str) -> tuple[dict[str, Any] | None, list[Event]]:
        """Return the latest snapshot (or None) and every event after it, consistently."""
        with self._lock:
            game = self._game(game_id)
            snapshot = None if game.snapshot is None else loads(game.snapshot)
            after = 0 if snapshot is None else snapshot["version"]
            return snapshot, [loads(e) for e in game.events[after:]]

    def version(self, game_id: str) -> int:
        """Return the game's version: its number of events (0 for an unknown game)."""
        with self._lock:
            return len(self._game(game_id).events)

    def idempotency_begin(self, claim: KeyClaim, ttl_pending: int = 30, *,
                          orphan: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """Claim the key as pending for this process and `claim` and return None (also if it
        is this claim's already), or return the record already there; with `orphan`, claim
        over a key still holding that record."""
        with self._lock:
            record = self._theirs(claim)
            if record is None or (orphan is not None and record == dumps(orphan)):
                self._set(claim.name, self._pending(claim), ttl_pending)
                return None
            stored: dict[str, Any] = loads(record)
            return stored

    def holder_alive(self, holder: str) -> bool:
        """Return whether the store named `holder` (this one or a sibling) is not closed."""
        with self._lock:
            return holder in self._alive

    def idempotency_finish(self, claim: KeyClaim, record_json: str) -> dict[str, Any] | None:
        """Store the final record of a request that appended nothing and return None, unless
        another claim holds or answered the key by now: then return its record."""
        with self._lock:
            record = self._theirs(claim)
            if record is None:
                self._set(claim.name, record_json, self._ttl)
                return None
            stored: dict[str, Any] = loads(record)
            return stored

    def idempotency_admit(self, tally: str, name: str) -> int:
        """Count the key `name` in its seat's `tally` and return 0, or, with the cap of live
        keys reached, the seconds until the oldest expires."""
        with self._lock:
            now = time.monotonic()
            live = {n: expiry for n, expiry in self._tallies.get(tally, {}).items()
                    if expiry > now}
            self._tallies[tally] = live
            if not self._keys_per_seat or name in live:
                return 0
            if len(live) >= self._keys_per_seat:
                return max(1, math.ceil(min(live.values()) - now))
            live[name] = now + self._ttl
            return 0

    def idempotency_abort(self, claim: KeyClaim) -> None:
        """Release a key that is still pending for `claim` (any other record is kept)."""
        with self._lock:
            if self._get(claim.name) == self._pending(claim):
                del self._keys[claim.name]

    def sibling(self) -> InMemoryEventStore:
        """Return this store's data as another process sees it: the same games and keys, a
        holder of its own, alive until it is closed."""
        other = copy.copy(self)
        other.holder = _new_holder()
        with self._lock:
            self._alive.add(other.holder)
        return other

    def close(self) -> None:
        """End this process, as far as the store can tell: its holder is no longer alive."""
        with self._lock:
            self._alive.discard(self.holder)

    def wait_for_events(self, game_id: str, after: int, timeout_ms: int) -> list[Event]:
        """Return the events after `after`, blocking up to timeout_ms for one; [] on timeout."""
        with self._appended:
            self._appended.wait_for(lambda: len(self._game(game_id).events) > after,
                                    timeout=max(timeout_ms, 0) / 1000)
            return [loads(e) for e in self._game(game_id).events[max(after, 0):]]

    def put_ticket(self, game_id: str, ticket_hash: str, token_hash: str, ttl_s: float) -> None:
        """Keep a stream ticket by its hash, expiring in `ttl_s`."""
        with self._lock:
            self._keys[f"ticket:{game_id}:{ticket_hash}"] = (token_hash,
                                                             time.monotonic() + ttl_s)

    def ticket_token(self, game_id: str, ticket_hash: str) -> str | None:
        """Return the token hash a live stream ticket was kept for, else None."""
        with self._lock:
            return self._get(f"ticket:{game_id}:{ticket_hash}")

    def ping(self) -> bool:
        """Return whether the store can be reached (always, in memory)."""
        return True

    def _pending(self, claim: KeyClaim) -> str:
        """Return the record of `claim` pending in this process's name."""
        return pending_record(claim, self.holder)

    def _theirs(self, claim: KeyClaim) -> str | None:
        """Return the key's record, unless it is gone or the claim's own pending record."""
        record = self._get(claim.name)
        return None if record == self._pending(claim) else record

    def _game(self, game_id: str) -> _Game:
        return self._live_games().get(game_id, _Game())

    def _live_games(self) -> dict[str, _Game]:
        """Return the games, once those past their expiry are forgotten."""
        now = time.monotonic()
        for game_id in [g for g, game in self._games.items()
                        if game.expiry is not None and game.expiry <= now]:
            del self._games[game_id]
        return self._games

    def _get(self, name: str) -> str | None:
        value, expiry = self._keys.get(name, (None, 0.0))
        if value is not None and expiry <= time.monotonic():
            del self._keys[name]
            return None
        return value

    def _set(self, name: str, value: str, ttl_s: int) -> None:
        self._keys[name] = (value, time.monotonic() + ttl_s)
