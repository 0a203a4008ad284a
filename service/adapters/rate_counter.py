"""The rate limits' counter: hits per key in fixed windows, counted in the store's Redis."""

from __future__ import annotations

from typing import Final

from service.adapters.redis_store import RedisEventStore, reachable
from service.usecases.ports import StoreFull

# KEYS: counter. ARGV: window seconds. Returns the count.
INCR_WINDOW_LUA: Final = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n
"""


class RedisRateCounter:
    """Counts hits in the store's Redis (plain or cluster: each key is one slot), through the
    store's lent connections: it runs twice a request, so not through redis-py's pool."""

    def __init__(self, store: RedisEventStore) -> None:
        self._store = store

    def incr_window(self, key: str, window_s: int) -> int:
        """Count one hit on `key` in a window that starts at its first hit; return the count.
        A full store (out of memory) counts nothing and returns 0: reads must still answer,
        and every write is refused by the store anyway."""
        try:
            return self._incr(key, window_s)
        except StoreFull:
            return 0

    @reachable
    def _incr(self, key: str, window_s: int) -> int:
        return int(self._store.run_script(INCR_WINDOW_LUA, [key], [window_s]))
