"""The outbox of turn notifications: a Redis list they are taken from by one drain at a
time, without losing any to a crash, and the sorted set of those waiting for a retry, taken
by the same drains once due.

A request pushes each notification with one command (`push`); the push that finds no drain
queued or running marks one queued and says so, and the caller queues its job. The drain
that runs holds a lease (`claim`; a `take` that takes something renews it, and `renew`) and
moves notifications from the outbox, and the retries due once the outbox holds fewer than it
asks for (so that retries never hold up a first try), to a hash of those being tried. Each
leaves it once tried (`settle`), in the same step that puts it among the retries if it
failed, each scored by when it is due: in any order, so that a slow receiver holds up only
its own. A drain killed mid-try leaves them there: the next drain, once the lease has run
out, tries them again first (`recover`; at least once: a receiver may see a `webhook-id`
twice). `release` ends a drain only when nothing waits, is being tried or is due, in the
same step that clears its mark, so no notification pushed meanwhile waits unseen; a lease
run out with notifications left, or a retry come due, is picked up by the next push, or the
next `sweep`."""

from __future__ import annotations

import secrets
import time

import redis

OUTBOX = "spinner:{webhooks}:outbox"
"""The notifications not yet tried: JSON [game id, webhook-id, body, made at, retry delays]."""
TRYING = "spinner:{webhooks}:in-flight"
"""The notifications the drain holding the lease is trying: webhook-id -> the JSON."""
RETRIES = "spinner:{webhooks}:retries"
"""The notifications waiting for a retry, scored by when it is due (Unix milliseconds): the
same JSON, its retry delays those left after this one."""
DRAIN = "spinner:{webhooks}:drain"
"""The mark of a drain: `queued` (its job is queued), or the token of the drain that runs."""
QUEUED = "queued"
LEASE_MS = 20_000
"""How long a mark stands unless renewed: a drain renews it as it takes, and every few seconds
while its lanes are busy; a drain or job lost is replaced after this long (and a sweep)."""

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
_DUE = """
local function due(retries, now)
  return redis.call('ZCOUNT', retries, '-inf', now)
end
"""
"""Lua: how many retries are due at `now` (Unix milliseconds)."""
_TAKE = """
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return false end
local size = tonumber(ARGV[2])
local batch = redis.call('LRANGE', KEYS[1], 0, size - 1)
if #batch > 0 then redis.call('LTRIM', KEYS[1], #batch, -1) end
if #batch < size then
  local due = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', ARGV[4], 'LIMIT', 0, size - #batch)
  if #due > 0 then
    redis.call('ZREM', KEYS[4], unpack(due))
    for _, entry in ipairs(due) do batch[#batch + 1] = entry end
  end
end
if #batch == 0 then return batch end
for _, entry in ipairs(batch) do redis.call('HSET', KEYS[2], cjson.decode(entry)[2], entry) end
redis.call('PEXPIRE', KEYS[3], ARGV[3])
return batch
"""
_IF_HELD = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end
"""
_RECOVER = _IF_HELD + "return redis.call('HVALS', KEYS[2])"
_RENEW = _IF_HELD + "return redis.call('PEXPIRE', KEYS[1], ARGV[2])"
_SETTLE = _IF_HELD + """
local tried = tonumber(ARGV[2])
if tried > 0 then redis.call('HDEL', KEYS[2], unpack(ARGV, 3, 2 + tried)) end
for i = 3 + tried, #ARGV, 2 do redis.call('ZADD', KEYS[3], ARGV[i], ARGV[i + 1]) end
return 1
"""
_HAND_ON = _IF_HELD + "redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1"
_RELEASE = _IF_HELD + _DUE + """
local waiting = redis.call('LLEN', KEYS[2]) + redis.call('HLEN', KEYS[3])
if waiting + due(KEYS[4], ARGV[2]) > 0 then return 0 end
return redis.call('DEL', KEYS[1])
"""
_SWEEP = _DUE + """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local waiting = redis.call('LLEN', KEYS[2]) + redis.call('HLEN', KEYS[3])
if waiting + due(KEYS[4], ARGV[3]) == 0 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""


class Outbox:
    """The outbox, the notifications being tried and those waiting for a retry, and the
    drain's mark, in the queue's Redis."""

    def __init__(self, connection: redis.Redis) -> None:
        self.connection = connection
        script = connection.register_script
        self._push, self._claim, self._take = script(_PUSH), script(_CLAIM), script(_TAKE)
        self._recover, self._renew, self._settle = script(_RECOVER), script(_RENEW), script(_SETTLE)
        self._hand_on, self._release = script(_HAND_ON), script(_RELEASE)
        self._sweep = script(_SWEEP)

    def push(self, entry: str) -> bool:
        """Append a notification; True if no drain was queued or running (queue one now)."""
        return bool(self._push(keys=[OUTBOX, DRAIN], args=[entry, LEASE_MS]))

    def claim(self) -> str | None:
        """Take the lease for a drain (the mark is `queued`, or gone); return its token, None
        if another drain holds it."""
        token = secrets.token_hex(8)
        return token if self._claim(keys=[DRAIN], args=[token, QUEUED, LEASE_MS]) else None

    def recover(self, token: str) -> list[bytes] | None:
        """Return what a lost drain left being tried; None if the lease is lost."""
        left = self._recover(keys=[DRAIN, TRYING], args=[token])
        return None if left is None else list(left)

    def take(self, token: str, size: int) -> list[bytes] | None:
        """Move up to `size` notifications from the outbox, filled up with the retries now
        due, to those being tried, and return them, renewing the lease; none if nothing
        waits (no write: nothing to make durable); None if the lease is lost."""
        batch = self._take(keys=[OUTBOX, TRYING, DRAIN, RETRIES],
                           args=[token, size, LEASE_MS, now_ms()])
        return None if batch is None else list(batch)

    def renew(self, token: str) -> bool:
        """Renew the lease; False if it is lost."""
        return bool(self._renew(keys=[DRAIN], args=[token, LEASE_MS]))

    def settle(self, token: str, tried: list[str], retries: list[tuple[float, str]]) -> bool:
        """Forget the notifications `tried` (webhook-ids), putting `retries` (when due, in
        Unix seconds, and the entry) among those waiting; False if the lease is lost (the
        next drain tries them again)."""
        due = [part for at, entry in retries for part in (int(at * 1000), entry)]
        return bool(self._settle(keys=[DRAIN, TRYING, RETRIES],
                                 args=[token, len(tried), *tried, *due]))

    def hand_on(self, token: str) -> bool:
        """Give the lease back as `queued` for a fresh drain job; False if it was lost."""
        return bool(self._hand_on(keys=[DRAIN], args=[token, QUEUED, LEASE_MS]))

    def release(self, token: str) -> bool:
        """End the drain if nothing waits, is being tried nor is due (clearing its mark);
        False if something does."""
        return bool(self._release(keys=[DRAIN, OUTBOX, TRYING, RETRIES], args=[token, now_ms()]))

    def sweep(self) -> bool:
        """Mark a drain queued if notifications wait or a retry is due and no drain is marked
        (its job, or the drain, was lost and its lease ran out; or none ran when the retry
        came due); True if the caller should queue its job."""
        return bool(self._sweep(keys=[DRAIN, OUTBOX, TRYING, RETRIES],
                                args=[QUEUED, LEASE_MS, now_ms()]))

    def waiting(self) -> int:
        """How many notifications wait for a try or are being tried."""
        return sum(int(count) for count in (
            self.connection.llen(OUTBOX), self.connection.hlen(TRYING),
            self.connection.zcard(RETRIES)))


def now_ms() -> int:
    """Return the time now in Unix milliseconds, as retries are scored."""
    return int(time.time() * 1000)
