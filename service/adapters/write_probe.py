"""Whether a Redis takes writes now: a key with a short TTL written on it or, on a Redis
Cluster, on every master (a key of a slot each one serves, sent straight to that node).

A PING is not enough: it reaches one node, and a node answers it while its cluster is failing
(CLUSTERDOWN), out of memory (OOM) or a read-only replica, all of which refuse a write.
"""

from __future__ import annotations

import functools
import itertools
from typing import Final

import redis
from redis.cluster import ClusterNode, RedisCluster
from redis.crc import key_slot

PROBE_KEY: Final = "spinner:probe"
PROBE_TTL_MS: Final = 10_000
"""A probe key outlives a few health checks, then goes: nothing piles up."""


def write(client: redis.Redis | RedisCluster) -> None:
    """Write the probe key (on every master of a cluster); raise what Redis answers if one
    cannot take it."""
    if not isinstance(client, RedisCluster):
        client.set(PROBE_KEY, "1", px=PROBE_TTL_MS)
        return
    for node, slot in masters(client).items():
        client.get_redis_connection(node).set(probe_key(slot), "1", px=PROBE_TTL_MS)


def masters(cluster: RedisCluster) -> dict[ClusterNode, int]:
    """Each master in the client's slot map, with a slot it serves."""
    served: dict[ClusterNode, int] = {}
    for slot, nodes in cluster.nodes_manager.slots_cache.items():
        served.setdefault(nodes[0], slot)
    return served


@functools.cache
def probe_key(slot: int) -> str:
    """Return the first key `spinner:probe:{n}` (n = 0, 1, ...) that is in `slot`."""
    keys = (f"{PROBE_KEY}:{{{n}}}" for n in itertools.count())
    return next(key for key in keys if key_slot(key.encode()) == slot)
