"""The Redis event store: one stream per game, appended by a Lua script that checks the version.

Every key of a game carries the hash tag `{<id>}`, so a game lives in one Redis Cluster slot,
and the scripts take all their keys in KEYS (they never build key names).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, ParamSpec, TypeVar

import redis
from redis.exceptions import (
    ClusterError,
    NoScriptError,
    OutOfMemoryError,
    ReadOnlyError,
    SlotNotCoveredError,
    TryAgainError,
)

from service.adapters import compact_log, liveness, write_probe
from service.adapters.outbox import DRAIN, LEASE_MS, OUTBOX, PUSH_LUA
from service.game import events as ev
from service.usecases.ports import (
    IDEMPOTENCY_KEYS_PER_SEAT,
    IDEMPOTENCY_TTL_S,
    UNPLAYED_GAME_TTL_S,
    ConcurrencyError,
    Event,
    KeyClaim,
    KeyTaken,
    StoreError,
    StoreFull,
    StoreUnavailable,
    check_creation,
    check_numbering,
    dumps,
    loads,
    pending_record,
)

# Lua shared by CREATE_LUA and APPEND_LUA. An append's id is a second field, 'a', of the first
# entry it adds: `add_events` adds the id/json pairs of ARGV from index `first`, and `landed`
# says whether the entry `seq` carries the append id `id` (that append is in the log).
EVENTS_LUA: Final = """
local function add_events(key, first, id)
  for i = first, #ARGV, 2 do
    if i == first and id ~= '' then
      redis.call('XADD', key, ARGV[i], 'e', ARGV[i + 1], 'a', id)
    else
      redis.call('XADD', key, ARGV[i], 'e', ARGV[i + 1])
    end
  end
end
local function landed(key, seq, id)
  local at = seq .. '-0'
  local entry = redis.call('XRANGE', key, at, at)[1]
  return entry ~= nil and entry[2][3] == 'a' and entry[2][4] == id
end
"""

# Lua shared by the scripts that read a compacted game's log (see compact_log): `closed_at`
# returns the version of the compact log in `key`, or nil if there is none.
CLOSED_LUA: Final = """
local function closed_at(key)
  return tonumber(string.match(redis.call('GETRANGE', key, 0, 19), '^(%d+):'))
end
"""

# KEYS: events, meta[, outbox, its drain's mark]. ARGV: append id or '', ttl ms (0: none), meta
# field count m, m meta fields and values, the count k of outbox entries, the drain mark's
# lease in ms, the k entries, then id/json pairs. Returns 1 once created (its keys expiring
# after the ttl; with k > 0, {1, 1 if it marked a drain queued, else 0}); 0 if the game
# exists, unless its first entry carries this append id (the reply of this very creation was
# lost and it was sent again): then 1 and nothing is written again, but with k > 0 {1, 1}, so
# that a drain is queued (the lost reply may have said the first run marked one).
CREATE_LUA: Final = EVENTS_LUA + PUSH_LUA + """
local m = tonumber(ARGV[3])
local k = tonumber(ARGV[m + 4])
if redis.call('EXISTS', KEYS[1], KEYS[2]) > 0 then
  if ARGV[1] ~= '' and landed(KEYS[1], 1, ARGV[1]) then return k > 0 and {1, 1} or 1 end
  return 0
end
for i = 4, m + 2, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
add_events(KEYS[1], m + 6 + k, ARGV[1])
if tonumber(ARGV[2]) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
if k == 0 then return 1 end
return {1, push_outbox(KEYS[3], KEYS[4], m + 6, m + 5 + k, ARGV[m + 5])}
"""

# KEYS: events, snap, meta, log[, outbox, its drain's mark][, idem]. ARGV: expected version,
# snapshot json or '', idem record, idem ttl, append id or '', the claim's pending idem record
# or '', '1' for a client's move (the game's keys are kept for good from then on; before, a
# snapshot expires with the log) or '0', the count k of outbox entries, the drain mark's lease
# in ms, the k entries, then id/json pairs. Returns the version found; it appended iff that is
# the expected one (with k > 0, {that version, 1 if it marked a drain queued, else 0}). A
# compacted log (its game ended) takes nothing and returns minus its version.
# A log past the expected version whose entry there carries this append id holds this very
# append (its reply was lost, the client sent it again): the expected version is returned
# (with k > 0, {it, 1}, so that a drain is queued: the lost reply may have said the first run
# marked one) and nothing is written again. Else, an idem key there that is not the claim's
# pending record (another request took it over, or answered it) is returned (a string), and
# nothing is written.
APPEND_LUA: Final = EVENTS_LUA + CLOSED_LUA + PUSH_LUA + """
local n = redis.call('XLEN', KEYS[1])
local expected = tonumber(ARGV[1])
if n == 0 then return -(closed_at(KEYS[4]) or 0) end
local k = tonumber(ARGV[8])
if n ~= expected then
  if n > expected and ARGV[5] ~= '' and landed(KEYS[1], expected + 1, ARGV[5]) then
    return k > 0 and {expected, 1} or expected
  end
  return n
end
local idem = KEYS[k > 0 and 7 or 5]
if idem then
  local record = redis.call('GET', idem)
  if record and record ~= ARGV[6] then return record end
end
add_events(KEYS[1], 10 + k, ARGV[5])
if ARGV[7] == '1' then
  for i = 1, 3 do redis.call('PERSIST', KEYS[i]) end
end
if ARGV[2] ~= '' then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then redis.call('SET', KEYS[2], ARGV[2], 'PX', ttl)
  else redis.call('SET', KEYS[2], ARGV[2]) end
end
if idem then redis.call('SET', idem, ARGV[3], 'EX', ARGV[4]) end
if k == 0 then return n end
return {n, push_outbox(KEYS[5], KEYS[6], 10, 9 + k, ARGV[9])}
"""

# KEYS: events, snap, log. Returns {snapshot json or '', the stream entries after the
# snapshot}, or {'', {}, the compact log} for a compacted game.
LOAD_LUA: Final = """
local log = redis.call('GET', KEYS[3])
if log then return {'', {}, log} end
local snap = redis.call('GET', KEYS[2])
local start = '-'
if snap then start = (cjson.decode(snap)['version'] + 1) .. '-0' end
return {snap or '', redis.call('XRANGE', KEYS[1], start, '+')}
"""

# KEYS: events, log. ARGV: first and last stream id, the seq the read is after. Returns
# {the stream entries}, or {{}, the compact log} for a compacted game with events after it;
# {} if there is no such game.
READ_LUA: Final = CLOSED_LUA + """
local entries = redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[2])
if #entries > 0 or redis.call('EXISTS', KEYS[1]) == 1 then return {entries} end
local closed = closed_at(KEYS[2])
if closed == nil then return {} end
if closed <= tonumber(ARGV[3]) then return {entries} end
return {entries, redis.call('GET', KEYS[2])}
"""

# KEYS: events, log. Returns the game's version: its stream's length, or its compact log's.
VERSION_LUA: Final = CLOSED_LUA + """
local n = redis.call('XLEN', KEYS[1])
if n > 0 then return n end
return closed_at(KEYS[2]) or 0
"""

# KEYS: events, snap, log. ARGV: the compact log, its version. Replaces the stream and the
# snapshot by the compact log (with the stream's ttl, if any) and returns 1, unless the
# stream is no longer at that version: then 0.
COMPACT_LUA: Final = """
if redis.call('XLEN', KEYS[1]) ~= tonumber(ARGV[2]) then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
redis.call('SET', KEYS[3], ARGV[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[3], ttl) end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
"""

# KEYS: idem. ARGV: the claim's pending record, ttl, an orphan's pending record or ''.
# Returns nil once claimed: afresh, over the orphan's record if it is still there to the byte,
# or found claimed by this very claim already (its reply was lost and it was sent again);
# else the record there. A claim's pending record names its holder and nonce, so no other
# claim's record is ever the same to the byte.
BEGIN_LUA: Final = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then return false end
local record = redis.call('GET', KEYS[1])
if record == ARGV[1] then return false end
if record ~= ARGV[3] then return record end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return false
"""

# KEYS: idem. ARGV: final record, ttl, the claim's pending record. Stores the record and
# returns nil if the key is absent or still the claim's pending record, else returns the
# record there.
FINISH_LUA: Final = """
local record = redis.call('GET', KEYS[1])
if record and record ~= ARGV[3] then return record end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return false
"""

# KEYS: a seat's tally of keys (a sorted set by expiry, ms). ARGV: the key's name, now (ms),
# ttl (ms), the cap. Drops the expired; returns 0 if the name is there or is added, else
# (the cap reached) the seconds until the oldest expires.
ADMIT_LUA: Final = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return math.max(1, math.ceil((tonumber(oldest[2]) - tonumber(ARGV[2])) / 1000))
end
redis.call('ZADD', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 0
"""

# KEYS: idem. ARGV: the claim's pending record. Deletes the key only while it holds that.
ABORT_LUA: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
"""

BLOCK_SLICE_MS: Final = 1000  # well below the store client's bootstrap.STORE_TIMEOUT_S

NOT_NOW: Final = (redis.ConnectionError, redis.TimeoutError, ClusterError, TryAgainError,
                  SlotNotCoveredError, ReadOnlyError, OutOfMemoryError)
"""The Redis errors that mean "not now, retry" (503), not a bug (500): no answer in time or
no connection, data still loading (BusyLoadingError is a ConnectionError), a failing or
resharding cluster (CLUSTERDOWN, MASTERDOWN, TRYAGAIN, a slot no node serves, redirections
without end), a master turned replica by a failover (READONLY), memory full (OOM). Any other
error, a script's ResponseError say, is a bug and stays one (but see REFUSED_IN_SCRIPT)."""
REFUSED_IN_SCRIPT: Final = re.compile(r"-(OOM|READONLY|LOADING|CLUSTERDOWN|MASTERDOWN|TRYAGAIN) ")
"""A script's error that is a NOT_NOW refusal of a command it called (`...: -OOM command not
allowed when used memory > 'maxmemory'.`): Redis reports it as the script's ResponseError."""


def not_now(error: Exception) -> bool:
    """Whether a Redis error means "not now, retry" (NOT_NOW, REFUSED_IN_SCRIPT)."""
    return isinstance(error, NOT_NOW) or (isinstance(error, redis.ResponseError)
                                          and REFUSED_IN_SCRIPT.search(str(error)) is not None)


def full(error: Exception) -> bool:
    """Whether a Redis error is its refusal of a write for want of memory (OOM), from a
    command or from one a script called."""
    if isinstance(error, OutOfMemoryError):
        return True
    found = REFUSED_IN_SCRIPT.search(str(error)) if isinstance(error, redis.ResponseError) else None
    return found is not None and found.group(1) == "OOM"


log = logging.getLogger("spinner.store")
P = ParamSpec("P")
R = TypeVar("R")


def reachable(method: Callable[P, R]) -> Callable[P, R]:
    """Turn the Redis errors that mean "not now" (`not_now`) into StoreUnavailable."""
    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except (redis.RedisError, SlotNotCoveredError) as error:
            if full(error):
                raise StoreFull(f"redis: {type(error).__name__}: {error}") from error
            if not_now(error):
                raise StoreUnavailable(f"redis: {type(error).__name__}: {error}") from error
            raise
    return wrapper


def game_key(game_id: str, part: str) -> str:
    """Return the name of one of a game's keys, hash-tagged by the game id."""
    return f"game:{{{game_id}}}:{part}"


def _keys(game_id: str, *parts: str) -> list[str]:
    return [game_key(game_id, part) for part in parts]


def _entries(events: list[Event]) -> list[str]:
    return [arg for event in events for arg in (f"{event['seq']}-0", dumps(event))]


@functools.cache
def _sha1(script: str) -> str:
    return hashlib.sha1(script.encode()).hexdigest()


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _stream_events(entries: list[Any]) -> list[Event]:
    """The events of XRANGE entries: raw (`[id, [field, value, ...]]`) or as a cluster
    client's callback leaves them (`(id, {field: value})`)."""
    return [loads(_event_field(fields)) for _, fields in entries]


def _xread_entries(found: Any) -> list[Any]:
    """The entries of one stream's XREAD reply: RESP2's `[[key, entries]]` (a cluster
    client's parsed alike), RESP3's `{key: entries}`."""
    if isinstance(found, dict):
        (entries,) = found.values()
        return list(entries)
    return list(found[0][1])


def _event_field(fields: list[Any] | dict[Any, Any]) -> Any:
    """The value of an entry's field 'e', its event: the scripts write it first, and an
    append id ('a') may follow it."""
    if isinstance(fields, dict):
        return fields.get(b"e") or fields["e"]
    return fields[1]


def _round_trip(connection: redis.connection.AbstractConnection, args: tuple[Any, ...]) -> Any:
    connection.send_command(*args)
    return connection.read_response()


class RedisEventStore:
    """An EventStore over a redis.Redis client (bytes or decoded responses, RESP2 or RESP3)."""

    def __init__(self, client: redis.Redis, *, idempotency_ttl_s: int = IDEMPOTENCY_TTL_S,
                 idempotency_keys_per_seat: int = IDEMPOTENCY_KEYS_PER_SEAT,
                 unplayed_game_ttl_s: float = UNPLAYED_GAME_TTL_S, compact: bool = True) -> None:
        self.client = client
        self._ttl = idempotency_ttl_s
        self._unplayed_ttl_ms = int(unplayed_game_ttl_s * 1000)
        self._compact = compact  # compact a finished game's log (off: only to measure it)
        self._keys_per_seat = idempotency_keys_per_seat
        self._idle: list[redis.Redis] = []  # lent clients, each holding one connection
        self._pid = os.getpid()
        self._heartbeat: liveness.Heartbeat | None = None  # started by the first claim
        self._holding = threading.Lock()
        self._unreleased: set[tuple[str, str]] = set()  # (key, pending record) to delete
        self._releasing = threading.Lock()

    @contextlib.contextmanager
    def _redis(self) -> Iterator[redis.Redis]:
        """Lend a client for one command: over a plain Redis, one that keeps a connection of
        the shared pool for itself (no pool lock or check a command), taken back afterwards;
        a cluster client is shared. A forked child makes its own, never using its parent's.
        A command cut short by anything but a Redis error reply drops its connection, whose
        reply could still be on the way."""
        if not isinstance(self.client, redis.Redis):
            yield self.client
            return
        if self._pid != os.getpid():
            self._idle, self._pid = [], os.getpid()
        try:
            client = self._idle.pop()  # atomic, so threads may share the list too
        except IndexError:
            client = redis.Redis(connection_pool=self.client.connection_pool,
                                 single_connection_client=True)
        try:
            yield client
        except redis.ResponseError:
            raise
        except BaseException:
            client.connection.disconnect()
            raise
        finally:
            self._idle.append(client)

    def _command(self, *args: Any) -> Any:
        """Run one command; return the server's reply as is (no redis-py response callback).

        Over a plain Redis it goes straight to a lent client's connection, retried by the
        connection's retry policy as redis-py would: this skips redis-py's per-command
        wrappers, which cost more CPU than the round trip. A cluster client routes it by key."""
        with self._redis() as client:
            connection = getattr(client, "connection", None)
            if connection is None:
                return client.execute_command(*args)
            return connection.retry.call_with_retry(lambda: _round_trip(connection, args),
                                                    lambda _error: connection.disconnect())

    def run_script(self, script: str, keys: list[str], args: list[Any] | tuple[()] = ()) -> Any:
        """Run a Lua script by its SHA-1 on a lent connection, loading it first if the server
        lacks it; return the raw reply (the rate counter's scripts run here too)."""
        command = ("EVALSHA", _sha1(script), len(keys), *keys, *args)
        try:
            return self._command(*command)
        except NoScriptError:  # a new, restarted or flushed server
            with self._redis() as client:
                client.script_load(script)
            return self._command(*command)

    @reachable
    def create(self, game_id: str, events: list[Event], meta: dict[str, str], *,
               append_id: str | None = None, outbox: Sequence[str] = ()) -> bool:
        """Create a game with its first events and meta, and push the `outbox` entries in
        the same step, as `append` does (True if that marked a drain queued); raise
        StoreError if it exists (but a retry of this very creation, by `append_id`, returns
        normally, True with `outbox` entries: its lost reply may have said so)."""
        check_creation(events)
        fields = [text for item in meta.items() for text in item]
        keys = _keys(game_id, "events", "meta") + ([OUTBOX, DRAIN] if outbox else [])
        args: list[str | int] = [append_id or "", self._unplayed_ttl_ms, len(fields), *fields,
                                 len(outbox), LEASE_MS, *outbox, *_entries(events)]
        created, marked = self._appended(self.run_script(CREATE_LUA, keys, args))
        if not created:
            raise StoreError(f"the game {game_id!r} exists")
        return marked

    @reachable
    def meta(self, game_id: str) -> dict[str, str]:
        """Return the game's meta (an empty dict for an unknown game)."""
        with self._redis() as client:
            stored = client.hgetall(game_key(game_id, "meta"))
        return {_text(name): _text(value) for name, value in stored.items()}

    @reachable
    def append(self, game_id: str, expected_version: int, events: list[Event], *,
               snapshot: dict[str, Any] | None = None,
               idempotency: tuple[KeyClaim, str] | None = None,
               append_id: str | None = None, moved_in: bool = False,
               outbox: Sequence[str] = ()) -> bool:
        """Atomically append events at `expected_version`, with an optional snapshot and, for
        a claim, its key's final record, and push the `outbox` entries (notifications) onto
        the outbox in the same step (so one fsync makes both durable, and none is lost
        between); return True if that marked a drain queued (the caller queues its job). A
        retry that finds this `append_id` at expected_version + 1 returns normally (True with
        `outbox` entries: its lost reply may have said so);
        a key another claim took raises KeyTaken. A client's move (`moved_in`) keeps the
        game for good; the append that ends it compacts its log. A cluster takes no outbox
        (`keeps_outbox`): its keys are in another slot than the game's."""
        check_numbering(expected_version, events)
        keys = _keys(game_id, "events", "snap", "meta", "log") + ([OUTBOX, DRAIN] if outbox else [])
        claim, record = idempotency or (None, "")
        keys += [] if claim is None else [claim.name]
        ours = "" if claim is None else self._pending(claim)
        snap = "" if snapshot is None else dumps(snapshot)
        args: list[str | int] = [expected_version, snap, record, self._ttl, append_id or "",
                                 ours, int(moved_in), len(outbox), LEASE_MS, *outbox,
                                 *_entries(events)]
        found, marked = self._appended(self.run_script(APPEND_LUA, keys, args))
        if isinstance(found, bytes | str):
            raise KeyTaken(loads(found))
        if found == 0:
            raise StoreError(f"there is no game {game_id!r}")
        if found != expected_version:
            raise ConcurrencyError(abs(found))  # negative: the log is closed at that version
        if self._compact and any(event["type"] == ev.GAME_ENDED for event in events):
            self._compact_quietly(game_id)
        return marked

    @staticmethod
    def _appended(found: Any) -> tuple[Any, bool]:
        """Split the create or append script's answer into what it found and whether it
        marked a drain queued (its answer with outbox entries is a pair)."""
        if isinstance(found, list):
            return found[0], bool(found[1])
        return found, False

    @property
    def keeps_outbox(self) -> bool:
        """Whether an append can push the outbox's entries too: only on a plain Redis."""
        return isinstance(self.client, redis.Redis)

    def _compact_quietly(self, game_id: str) -> None:
        """Compact the log of a game that just ended; if Redis cannot take that now (full,
        say), the game keeps its stream: the append landed, and its answer must say so."""
        try:
            self.compact(game_id)
        except StoreUnavailable as error:
            log.warning("the log of %s was not compacted: %s", game_id, error)

    @reachable
    def compact(self, game_id: str) -> bool:
        """Replace the game's stream and snapshot by one compact string of its whole log
        (compact_log), atomically; False if the log grew meanwhile or is compacted already."""
        events = _stream_events(self._command("XRANGE", game_key(game_id, "events"), "-", "+"))
        if not events:
            return False
        args = [compact_log.pack(events), len(events)]
        return bool(self.run_script(COMPACT_LUA, _keys(game_id, "events", "snap", "log"), args))

    @reachable
    def read(self, game_id: str, after: int = 0, until: int | None = None) -> list[Event]:
        """Return the events with after < seq <= until (None: to the end), in order."""
        after = max(after, 0)
        if until is not None and until <= after:
            return []
        return self._read(game_id, after, until) or []

    @reachable
    def read_known(self, game_id: str, after: int) -> list[Event] | None:
        """Return the events after `after`, in order; None if there is no such game."""
        return self._read(game_id, max(after, 0), None)

    def _read(self, game_id: str, after: int, until: int | None) -> list[Event] | None:
        """The events with after < seq <= until, from the stream or the compact log; None
        if the game has neither."""
        end = "+" if until is None else f"{until}-0"
        found = self.run_script(READ_LUA, _keys(game_id, "events", "log"),
                                [f"{after + 1}-0", end, after])
        if not found:
            return None
        if len(found) > 1:
            return compact_log.unpack(found[1])[after:until]
        return _stream_events(found[0])

    @reachable
    def load(self, game_id: str) -> tuple[dict[str, Any] | None, list[Event]]:
        """Return the latest snapshot (or None) and every event after it, in one script."""
        snap, entries, *packed = self.run_script(LOAD_LUA, _keys(game_id, "events", "snap", "log"))
        if packed:
            return None, compact_log.unpack(packed[0])
        return (loads(snap) if snap else None), _stream_events(entries)

    @reachable
    def version(self, game_id: str) -> int:
        """Return the game's version: its number of events (0 for an unknown game)."""
        return int(self.run_script(VERSION_LUA, _keys(game_id, "events", "log")))

    @reachable
    def idempotency_begin(self, claim: KeyClaim, ttl_pending: int = 30, *,
                          orphan: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """Claim the key as pending for this process and `claim` and return None (also if it
        is this claim's already), or return the record already there; with `orphan`, claim
        over a key still holding that record."""
        args = [self._pending(claim), ttl_pending, "" if orphan is None else dumps(orphan)]
        record = self.run_script(BEGIN_LUA, [claim.name], args)
        return None if record is None else loads(record)

    @reachable
    def holder_alive(self, holder: str) -> bool:
        """Return whether the process named `holder` still keeps its liveness key."""
        return bool(self._command("EXISTS", liveness.alive_key(holder)))

    @reachable
    def idempotency_finish(self, claim: KeyClaim, record_json: str) -> dict[str, Any] | None:
        """Store the final record of a request that appended nothing and return None, unless
        another claim holds or answered the key by now: then return its record."""
        args = [record_json, self._ttl, self._pending(claim)]
        record = self.run_script(FINISH_LUA, [claim.name], args)
        return None if record is None else loads(record)

    @reachable
    def idempotency_admit(self, tally: str, name: str) -> int:
        """Count the key `name` in its seat's `tally` and return 0, or, with the cap of live
        keys reached, the seconds until the oldest expires."""
        if not self._keys_per_seat:
            return 0
        args = [name, int(time.time() * 1000), self._ttl * 1000, self._keys_per_seat]
        return int(self.run_script(ADMIT_LUA, [tally], args))

    def idempotency_abort(self, claim: KeyClaim) -> None:
        """Release a key that is still pending for `claim` (any other record is kept); if
        Redis cannot take that now, this process's heartbeat makes the release later."""
        pending = (claim.name, self._pending(claim))
        try:
            self._release(*pending)
        except StoreUnavailable:
            with self._releasing:
                self._unreleased.add(pending)

    @reachable
    def _release(self, key_name: str, pending: str) -> None:
        """Delete the key if it still holds the `pending` record."""
        self.run_script(ABORT_LUA, [key_name], [pending])

    def close(self) -> None:
        """Stop this process's heartbeat and end its liveness, for good: a retry of a request
        whose key it holds, even one still running, takes the key over as if it had died."""
        with self._holding:
            heartbeat = self._heartbeat
        if heartbeat is not None and heartbeat.pid == os.getpid():
            heartbeat.stop()
            self._command("DEL", liveness.alive_key(heartbeat.holder))

    def _holder(self) -> str:
        """Return the name of this process as a key's holder; its first call starts the
        heartbeat that keeps it alive (a forked child starts one of its own)."""
        with self._holding:
            if self._heartbeat is None or self._heartbeat.pid != os.getpid():
                self._heartbeat = liveness.Heartbeat(self._beat)
            return self._heartbeat.holder

    def _pending(self, claim: KeyClaim) -> str:
        """Return the record of `claim` pending in this process's name."""
        return pending_record(claim, self._holder())

    def _beat(self, holder: str) -> None:
        """Say that the process `holder` is alive, for the next ALIVE_MS; then make the
        releases of keys Redis could not take when their requests failed."""
        self._command("SET", liveness.alive_key(holder), 1, "PX", liveness.ALIVE_MS)
        with self._releasing:
            unreleased = list(self._unreleased)
        for pending in unreleased:
            self._release(*pending)
            with self._releasing:
                self._unreleased.discard(pending)

    @reachable
    def wait_for_events(self, game_id: str, after: int, timeout_ms: int) -> list[Event]:
        """Return the events after `after`, blocking up to timeout_ms for one; [] on timeout.

        Blocks in XREAD slices of at most BLOCK_SLICE_MS, so the client's socket timeout
        must be longer than that.
        """
        deadline = time.monotonic() + timeout_ms / 1000
        key, start = game_key(game_id, "events"), f"{max(after, 0)}-0"
        while True:
            left_ms = int((deadline - time.monotonic()) * 1000)
            found = self._command("XREAD", "BLOCK", max(1, min(left_ms, BLOCK_SLICE_MS)),
                                  "STREAMS", key, start)
            if found:  # every entry after `after`: whole appends, each one script's XADDs
                return _stream_events(_xread_entries(found))
            if self._command("EXISTS", game_key(game_id, "log")):
                events = self.read(game_id, after)  # compacted: the stream waited on is gone
                if events:
                    return events
            if left_ms <= BLOCK_SLICE_MS:
                return []

    @reachable
    def put_ticket(self, game_id: str, ticket_hash: str, token_hash: str, ttl_s: float) -> None:
        """Keep a stream ticket by its hash, expiring in `ttl_s` (a key of the game's slot)."""
        self._command("SET", game_key(game_id, f"ticket:{ticket_hash}"), token_hash,
                      "PX", max(1, int(ttl_s * 1000)))

    @reachable
    def ticket_token(self, game_id: str, ticket_hash: str) -> str | None:
        """Return the token hash a live stream ticket was kept for, else None."""
        found = self._command("GET", game_key(game_id, f"ticket:{ticket_hash}"))
        return None if found is None else _text(found)

    def ping(self) -> bool:
        """Return whether the store can take writes now: a probe key is written on every
        master (see write_probe); an error that means "not now" says it cannot."""
        return self.write_refusal() is None

    def write_refusal(self) -> str | None:
        """Return None while the store takes writes, else why not: `full` (out of memory)
        or `store` (unreachable, loading, read-only, its cluster failing)."""
        try:
            self._write_probe()
        except StoreFull:
            return "full"
        except StoreUnavailable:
            return "store"
        return None

    @reachable
    def _write_probe(self) -> None:
        write_probe.write(self.client)
