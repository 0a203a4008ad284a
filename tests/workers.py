"""Real rq worker processes for tests, and polling for what they do."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable

from service.entrypoints import processes


def wait_until(check: Callable[[], bool], timeout: float) -> bool:
    """Poll `check` until it holds or `timeout` seconds pass; return whether it held."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


class WorkerProcess:
    """One `spinner worker` process (with its command line `flags`) against a Redis URL;
    stop() or kill() it."""

    def __init__(self, redis_url: str, *flags: str, **settings: str) -> None:
        env = {**os.environ, "REDIS_URL": redis_url, "SEEDED_GAMES": "1",
               **{name.upper(): value for name, value in settings.items()}}
        self.process = subprocess.Popen([sys.executable, "-m", "service.entrypoints.cli", "worker",
                                         *flags], env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)

    @property
    def pid(self) -> int:
        """The worker's process id."""
        return self.process.pid

    def stop(self) -> None:
        """Ask the worker to finish (SIGTERM), then reap it."""
        processes.stop(self.process, 10)

    def kill(self) -> None:
        """SIGKILL the worker, wherever it is."""
        self.process.kill()
        self.process.wait(timeout=10)
