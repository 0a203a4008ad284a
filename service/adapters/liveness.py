"""A process's liveness, as the holder of Idempotency-Keys: a key in Redis it keeps alive.

A request claims its Idempotency-Key as pending in the name of its process (its holder: host,
pid and a random boot id). The process keeps `holder:<name>:alive` alive with a short TTL while
it runs; once the key is gone the process is known dead, and a retry of a request it held
takes the key over at once instead of waiting out the pending record's TTL.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import threading
from types import MethodType
from typing import Final
from weakref import WeakMethod

ALIVE_MS: Final = 3000
"""How long a process counts as alive after its last beat."""
BEAT_S: Final = 1.0
"""How often a process beats: well within ALIVE_MS, so a few missed beats are survived."""


def new_holder() -> str:
    """Return a name for this process that no other process, before or after, has."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(8)}"


def alive_key(holder: str) -> str:
    """Return the name of the key that says the process `holder` is alive."""
    return f"holder:{holder}:alive"


class Heartbeat:
    """A holder of this process, alive from the start: `beat(holder)` runs once now (its
    errors raised), then every BEAT_S in a daemon thread (its errors waited out) until stop,
    or until the object `beat` is a method of is gone."""

    def __init__(self, beat: MethodType) -> None:
        self.holder = new_holder()
        self.pid = os.getpid()
        self._stopped = threading.Event()
        beat(self.holder)
        self._thread = threading.Thread(target=_beating, name="holder-heartbeat", daemon=True,
                                        args=(WeakMethod(beat), self.holder, self._stopped))
        self._thread.start()

    def stop(self) -> None:
        """Stop beating and wait for the thread to end (the holder's key is left as it is)."""
        self._stopped.set()
        self._thread.join()


def _beating(beat: WeakMethod[MethodType], holder: str, stopped: threading.Event) -> None:
    """Beat until stopped or the beat's object is gone. Any error (Redis down or loading, a
    failing cluster) only skips a beat: a heartbeat that died would have this live process
    taken for dead."""
    while not stopped.wait(BEAT_S):
        method = beat()
        if method is None:
            return
        with contextlib.suppress(Exception):
            method(holder)
        del method  # no strong reference while waiting
