"""Child processes: stopping them (SIGTERM, then SIGKILL), tying them to their parent's life,
and a lock file that tells one supervisor of a data dir from two."""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any


def reap(process: subprocess.Popen[Any], timeout: float) -> None:
    """Wait up to `timeout` seconds for `process` to exit, then SIGKILL and reap it."""
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def stop(process: subprocess.Popen[Any], timeout: float) -> None:
    """Send SIGTERM to `process` if it runs, and reap it (SIGKILL after `timeout` s)."""
    if process.poll() is None:
        process.terminate()
    reap(process, timeout)


def end_group(process: subprocess.Popen[Any]) -> None:
    """SIGKILL what is left of the process group that `process`, now exited, led (started
    with `process_group=0`): a child it forked (a worker's rq scheduler) outlives it else."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


PR_SET_PDEATHSIG = 1
"""prctl(2)'s option that sends a child a signal when the thread that started it exits."""


def dies_with_this_process() -> Callable[[], None] | None:
    """Return a `preexec_fn` that has the child sent SIGTERM when this process dies, even by
    SIGKILL (Linux only; None elsewhere): no child of `spinner serve` runs on unsupervised,
    nor keeps writing to a data dir a new `spinner serve` starts on."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getpid()

    def tie() -> None:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the tie was made
            os.kill(os.getpid(), signal.SIGTERM)

    return tie


def claim(path: Path, wait_s: float) -> IO[bytes] | None:
    """Lock the file at `path` (flock, exclusive), waiting up to `wait_s` seconds for
    another holder to let go; return the open file that holds the lock (it is held until
    every process that has it open closes it), or None if it stayed taken."""
    held = path.open("ab")
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return held
        except BlockingIOError:
            if time.monotonic() >= deadline:
                held.close()
                return None
            time.sleep(0.2)
