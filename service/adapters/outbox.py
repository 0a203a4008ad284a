"""The outbox of turn notifications: a Redis list their first tries are taken from, in
batches, by one drain at a time, without losing any to a crash.

A request pushes each notification with one command (`push`); the push that finds no drain
queued or running marks one queued and says so, and the caller queues its job. The drain
that runs holds a lease (`claim`, then `take` renews it) and moves a batch at a time from
the outbox to the list being tried, which it empties (`done`) only once every notification
of the batch is tried or handed to its retries. A drain killed mid-batch leaves that list:
the next drain, once the lease has run out, tries it again first (at least once; a receiver
may see a `webhook-id` twice). `release` ends a drain only when both lists are empty, in
the same step that clears its mark, so no notification pushed meanwhile waits unseen; a
lease run out with notifications left is picked up by the next push, or the next `sweep`."""

from __future__ import annotations

import secrets

import redis

OUTBOX = "spinner:{webhooks}:outbox"
"""The notifications not yet tried: JSON [game id, webhook-id, body, made at, retry delays]."""
TRYING = "spinner:{webhooks}:trying"
"""The batch the drain holding the lease is trying."""
DRAIN = "spinner:{webhooks}:drain"
"""The mark of a drain: `queued` (its job is queued), or the token of the drain that runs."""
QUEUED = "queued"
LEASE_MS = 60_000
"""How long a mark stands unless renewed: a drain renews it with each batch, and more often
while a batch is slow; a drain or job lost is replaced after this long."""

PUSH_LUA = """
local function push_outbox(outbox, mark, first, last, lease)
  redis.call('RPUSH', outbox, unpack(ARGV, first, last))
  return redis.call('SET', mark, '""" + QUEUED + """', 'NX', 'PX', lease) and 1 or 0
end
"""
"""Lua shared with the append script: push ARGV[first..last] onto the outbox; 1 if that
marked a drain queued (none was), else 0."""
_PUSH = PUSH_LUA + "return push_outbox(KEYS[1], KEYS[2], 1, 1, ARGV[2])"
_CLAIM = """
local mark = redis.call('GET', KEYS[1])
if mark and mark ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
"""
_TAKE = """
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return false end
local batch = redis.call('LRANGE', KEYS[2], 0, -1)
if #batch == 0 then
  batch = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
  if #batch == 0 then return batch end
  redis.call('LTRIM', KEYS[1], #batch, -1)
  redis.call('RPUSH', KEYS[2], unpack(batch))
end
redis.call('PEXPIRE', KEYS[3], ARGV[3])
return batch
"""
_IF_HELD = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
"""
_RENEW = _IF_HELD + "return redis.call('PEXPIRE', KEYS[1], ARGV[2])"
_DONE = _IF_HELD + "return redis.call('DEL', KEYS[2])"
_HAND_ON = _IF_HELD + "redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1"
_RELEASE = _IF_HELD + """
if redis.call('LLEN', KEYS[2]) + redis.call('LLEN', KEYS[3]) > 0 then return 0 end
return redis.call('DEL', KEYS[1])
"""
_SWEEP = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('LLEN', KEYS[2]) + redis.call('LLEN', KEYS[3]) == 0 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""


class Outbox:
    """The outbox's lists and the drain's mark, in the queue's Redis."""

    def __init__(self, connection: redis.Redis) -> None:
        self.connection = connection
        script = connection.register_script
        self._push, self._claim, self._take = script(_PUSH), script(_CLAIM), script(_TAKE)
        self._renew, self._done, self._hand_on = script(_RENEW), script(_DONE), script(_HAND_ON)
        self._release, self._sweep = script(_RELEASE), script(_SWEEP)

    def push(self, entry: str) -> bool:
        """Append a notification; True if no drain was queued or running (queue one now)."""
        return bool(self._push(keys=[OUTBOX, DRAIN], args=[entry, LEASE_MS]))

    def claim(self) -> str | None:
        """Take the lease for a drain (the mark is `queued`, or gone); return its token, None
        if another drain holds it."""
        token = secrets.token_hex(8)
        return token if self._claim(keys=[DRAIN], args=[token, QUEUED, LEASE_MS]) else None

    def take(self, token: str, size: int) -> list[bytes] | None:
        """Return the batch to try, renewing the lease: what a lost drain left being tried,
        or up to `size` from the outbox; none if it is empty (no write: nothing to make
        durable); None if the lease is lost."""
        batch = self._take(keys=[OUTBOX, TRYING, DRAIN], args=[token, size, LEASE_MS])
        return None if batch is None else list(batch)

    def renew(self, token: str) -> bool:
        """Renew the lease; False if it is lost."""
        return bool(self._renew(keys=[DRAIN], args=[token, LEASE_MS]))

    def done(self, token: str) -> None:
        """Forget the batch taken last: each of it is tried or handed to its retries."""
        self._done(keys=[DRAIN, TRYING], args=[token])

    def hand_on(self, token: str) -> bool:
        """Give the lease back as `queued` for a fresh drain job; False if it was lost."""
        return bool(self._hand_on(keys=[DRAIN], args=[token, QUEUED, LEASE_MS]))

    def release(self, token: str) -> bool:
        """End the drain if nothing waits (clearing its mark); False if something does."""
        return bool(self._release(keys=[DRAIN, OUTBOX, TRYING], args=[token]))

    def sweep(self) -> bool:
        """Mark a drain queued if notifications wait and no drain is marked (its job, or the
        drain, was lost and its lease ran out); True if the caller should queue its job."""
        return bool(self._sweep(keys=[DRAIN, OUTBOX, TRYING], args=[QUEUED, LEASE_MS]))

    def waiting(self) -> int:
        """How many notifications wait for their first try (the outbox and the batch)."""
        return int(self.connection.llen(OUTBOX)) + int(self.connection.llen(TRYING))
