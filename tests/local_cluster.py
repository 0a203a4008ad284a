"""A local Redis Cluster of real redis-server masters on loopback, for the tests.

Each master is a `RedisServer` in cluster mode with a data dir of its own; the 16384 slots
are split evenly with CLUSTER ADDSLOTS and the nodes meet with CLUSTER MEET (no redis-cli
needed). Redis 6.2 puts a node's cluster bus on its port + 10000, so ports are chosen with
both free.
"""

from __future__ import annotations

import random
import socket
import time
from pathlib import Path
from types import TracebackType
from typing import Final

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from service.adapters.bootstrap import CLUSTER_SCHEME
from service.entrypoints.redis_server import RedisServer

SLOTS: Final = 16384
BUS_OFFSET: Final = 10000
READY_TIMEOUT_S: Final = 20.0


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def cluster_port(taken: set[int] | None = None) -> int:
    """Return a loopback port that is free, as is its cluster bus port (port + 10000)."""
    taken = taken or set()
    rng = random.SystemRandom()
    for _ in range(500):
        port = rng.randrange(20000, 30000)
        if {port, port + BUS_OFFSET} & taken:
            continue
        if _bindable(port) and _bindable(port + BUS_OFFSET):
            return port
    raise RuntimeError("found no free port pair for a cluster node")


def slot_ranges(masters: int) -> list[range]:
    """Split the 16384 slots into `masters` contiguous ranges, as redis-cli does."""
    bounds = [SLOTS * i // masters for i in range(masters + 1)]
    return [range(bounds[i], bounds[i + 1]) for i in range(masters)]


class LocalCluster:
    """`masters` redis-server masters (no replicas) forming one cluster on 127.0.0.1."""

    def __init__(self, data_dir: Path, masters: int = 3, appendonly: bool = False,
                 node_timeout_ms: int = 5000) -> None:
        if masters < 3:
            raise ValueError("a Redis Cluster needs at least 3 masters")
        self.data_dir = Path(data_dir)
        self.servers: list[RedisServer] = []
        taken: set[int] = set()
        for index in range(masters):
            port = cluster_port(taken)
            taken |= {port, port + BUS_OFFSET}
            args = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", str(node_timeout_ms)]
            self.servers.append(RedisServer(self.data_dir / f"node{index}", port=port,
                                            appendonly=appendonly, extra_args=args))

    @property
    def ports(self) -> list[int]:
        """The masters' client ports, in the order their slot ranges run."""
        return [server.port for server in self.servers]

    @property
    def url(self) -> str:
        """A `redis+cluster://` URL for `REDIS_URL` (one node; the client finds the rest)."""
        return f"{CLUSTER_SCHEME}127.0.0.1:{self.ports[0]}/0"

    def node_client(self, index: int) -> redis.Redis:
        """Return a plain (non-cluster) client of one master, for inspection."""
        return redis.Redis("127.0.0.1", self.ports[index], socket_timeout=5,
                           retry=Retry(NoBackoff(), 0))

    def start(self) -> LocalCluster:
        """Start the masters, give each its slots, join them and wait until the cluster is ok."""
        try:
            for server in self.servers:
                server.start()
            self._form()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop every master (SIGTERM, then SIGKILL after a timeout)."""
        for server in self.servers:
            server.stop()

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()

    def _form(self) -> None:
        clients = [self.node_client(i) for i in range(len(self.servers))]
        try:
            for epoch, (client, slots) in enumerate(
                    zip(clients, slot_ranges(len(clients)), strict=True), start=1):
                client.execute_command("CLUSTER", "SET-CONFIG-EPOCH", epoch)
                client.execute_command("CLUSTER", "ADDSLOTS", *slots)
            for client, own in zip(clients, self.ports, strict=True):
                for port in self.ports:  # every pair meets: no waiting for gossip to spread
                    if port != own:
                        client.execute_command("CLUSTER", "MEET", "127.0.0.1", port)
            self._wait_until_ok(clients)
        finally:
            for client in clients:
                client.close()

    def _wait_until_ok(self, clients: list[redis.Redis]) -> None:
        """Wait until every node says the cluster is ok and knows every master."""
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if all(self._sees_all(client) for client in clients):
                return
            time.sleep(0.05)
        raise RuntimeError(f"the cluster on ports {self.ports} did not form; "
                           f"see the redis.log files under {self.data_dir}")

    def _sees_all(self, client: redis.Redis) -> bool:
        info = client.execute_command("CLUSTER", "INFO")
        text = info.decode() if isinstance(info, bytes) else str(info)
        fields = dict(line.split(":", 1) for line in text.split() if ":" in line)
        return (fields.get("cluster_state") == "ok"
                and fields.get("cluster_known_nodes") == str(len(self.servers))
                and fields.get("cluster_slots_ok") == str(SLOTS))
