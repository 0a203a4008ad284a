"""The rate limits' counter: hits per key in fixed windows, counted in Redis."""

from __future__ import annotations

from typing import Final

import redis

from service.adapters.redis_store import reachable

# KEYS: counter. ARGV: window seconds. Returns the count.
INCR_WINDOW_LUA: Final = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n
"""


class RedisRateCounter:
    """Counts hits in Redis (plain or cluster: each key is one slot)."""

    def __init__(self, client: redis.Redis) -> None:
        self._incr = client.register_script(INCR_WINDOW_LUA)

    @reachable
    def incr_window(self, key: str, window_s: int) -> int:
        """Count one hit on `key` in a window that starts at its first hit; return the count."""
        return int(self._incr(keys=[key], args=[window_s]))
