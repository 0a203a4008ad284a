"""Stopping child processes: ask politely (SIGTERM), then insist (SIGKILL)."""

from __future__ import annotations

import subprocess
from typing import Any


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
