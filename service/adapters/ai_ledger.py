"""Each client's open AI games and queued AI turns, counted in the queue's Redis (a plain
Redis, never a cluster: rq runs there) by Lua scripts, so that a count and its check are one
step however many API processes and workers there are."""

from __future__ import annotations

import time
from typing import Final

import redis

from service.adapters.redis_store import reachable
from service.usecases.clients import Client

PREFIX: Final = "ai-caps"

# KEYS: the client's open AI games (a set). ARGV: the game, the cap. 1: counted, 0: at the cap.
ADMIT_GAME_LUA: Final = """
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 1 end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
return 1
"""

# KEYS: the client's queued turns (a sorted set by when each was counted), its deferred
# turns (likewise), its done turns (by when each was done), the set of clients with deferred
# turns. ARGV: the turn, now, the time before which a queued turn is stale (its job failed
# for good) and a done one forgotten, the cap, the client's name in the set. 1: counted as
# queued (or done already: a read of the game from before it moved on); 0: deferred.
ADMIT_TURN_LUA: Final = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[3])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZSCORE', KEYS[3], ARGV[1]) then
  return 1
end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[4]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 1
end
redis.call('ZADD', KEYS[2], 'NX', ARGV[2], ARGV[1])
redis.call('SADD', KEYS[4], ARGV[5])
return 0
"""

# KEYS: queued, done. ARGV: the turn, now.
FINISH_TURN_LUA: Final = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
"""

# KEYS: queued, deferred. ARGV: the stale time, the cap, now. Moves the oldest deferred
# turns that fit under the cap to the queued ones, and returns them.
CLAIM_LUA: Final = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local room = tonumber(ARGV[2]) - redis.call('ZCARD', KEYS[1])
if room <= 0 then return {} end
local turns = redis.call('ZRANGE', KEYS[2], 0, room - 1)
for _, turn in ipairs(turns) do
  redis.call('ZREM', KEYS[2], turn)
  redis.call('ZADD', KEYS[1], ARGV[3], turn)
end
return turns
"""

# KEYS: the set of clients with deferred turns. ARGV: the prefix of clients' keys. Drops the
# clients with none left; returns the others.
DEFERRING_LUA: Final = """
local left = {}
for _, name in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local deferred = ARGV[1] .. '{' .. string.sub(name, 3) .. '}:deferred'
  if redis.call('ZCARD', deferred) == 0 then
    redis.call('SREM', KEYS[1], name)
  else
    table.insert(left, name)
  end
end
return left
"""


def _key(client: Client, part: str) -> str:
    """Return the key of one of a client's counts (hash-tagged by the client)."""
    return f"{PREFIX}:{{{client.id}}}:{part}"


def _member(client: Client) -> str:
    """Return the client's name in the set of clients with deferred turns: its kind, then
    its id (`1:key:…` keyed, `0:addr:…` anonymous)."""
    return f"{int(client.keyed)}:{client.id}"


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RedisAiLedger:
    """An AiLedger over a plain Redis (the queue's); a queued turn counted `stale_s` ago
    (its job failed for good, or its worker died and the sweep queued it again long ago)
    stops counting."""

    def __init__(self, connection: redis.Redis, stale_s: float) -> None:
        self.connection = connection
        self.stale_s = stale_s
        self.scripts = {lua: connection.register_script(lua) for lua in (
            ADMIT_GAME_LUA, ADMIT_TURN_LUA, FINISH_TURN_LUA, CLAIM_LUA, DEFERRING_LUA)}

    @reachable
    def admit_game(self, client: Client, game_id: str, cap: int) -> bool:
        """Count the game among the client's open AI games, unless it has `cap` of them."""
        return bool(self.scripts[ADMIT_GAME_LUA](keys=[_key(client, "games")],
                                                 args=[game_id, cap]))

    @reachable
    def open_games(self, client: Client) -> list[str]:
        """Return the games counted as the client's open AI games."""
        return sorted(_text(g) for g in self.connection.smembers(_key(client, "games")))

    @reachable
    def release_game(self, client: Client, game_id: str) -> None:
        """Stop counting the game."""
        self.connection.srem(_key(client, "games"), game_id)

    @reachable
    def admit_turn(self, client: Client, turn: str, cap: int) -> bool:
        """Count the turn as queued, or (at the cap) defer it; return whether it counted."""
        now = time.time()
        keys = [_key(client, "queued"), _key(client, "deferred"), _key(client, "done"),
                f"{PREFIX}:deferring"]
        args = [turn, now, now - self.stale_s, cap, _member(client)]
        return bool(self.scripts[ADMIT_TURN_LUA](keys=keys, args=args))

    @reachable
    def finish_turn(self, client: Client, turn: str) -> None:
        """Stop counting the turn as queued, and remember it done (for `stale_s`), so that a
        read of the game from before it moved on does not count it again."""
        keys = [_key(client, "queued"), _key(client, "done")]
        self.scripts[FINISH_TURN_LUA](keys=keys, args=[turn, time.time()])

    @reachable
    def claim_deferred(self, client: Client, cap: int) -> list[str]:
        """Count the client's oldest deferred turns that fit under `cap` as queued; return
        them."""
        keys = [_key(client, "queued"), _key(client, "deferred")]
        now = time.time()
        found = self.scripts[CLAIM_LUA](keys=keys, args=[now - self.stale_s, cap, now])
        return [_text(turn) for turn in found]

    @reachable
    def deferring(self) -> list[Client]:
        """Return the clients with deferred turns, forgetting those with none left."""
        names = self.scripts[DEFERRING_LUA](keys=[f"{PREFIX}:deferring"], args=[f"{PREFIX}:"])
        return [Client(name[2:], name[0] == "1") for name in map(_text, names)]
