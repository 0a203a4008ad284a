"""The servers under load: gunicorn (for the service or the hello-world) and their CPU time."""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from bench import ROOT
from service.entrypoints import processes
from service.entrypoints.redis_server import free_port

HOST = "127.0.0.1"  # the only address this benchmark ever talks to
START_TIMEOUT_S = 30.0


def gunicorn_command(app: str, port: int, args: argparse.Namespace) -> list[str]:
    """The one gunicorn command line, used for the hello-world and for the service alike."""
    return [sys.executable, "-m", "gunicorn", "--bind", f"{HOST}:{port}",
            "--worker-class", args.worker_class, "--workers", str(args.workers),
            "--worker-connections", str(args.worker_connections),
            "--threads", str(args.threads), "--backlog", "2048", "--log-level", "warning",
            app]


@contextlib.contextmanager
def gunicorn(app: str, env: dict[str, str], args: argparse.Namespace,
             log: Path) -> Iterator[tuple[int, int]]:
    """Run gunicorn for `app` on a free loopback port until the block ends; yield the port
    and the master's pid."""
    port = free_port()
    with log.open("ab") as out:
        master = subprocess.Popen(gunicorn_command(app, port, args), env=env,
                                  cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_until_up(port, master)
            while len(worker_pids(master.pid)) < args.workers:  # every worker counts its CPU
                time.sleep(0.05)
            wait_until_idle(worker_pids(master.pid))
            yield port, master.pid
        finally:
            processes.stop(master, 15)


def wait_until_up(port: int, master: subprocess.Popen[bytes]) -> None:
    """Wait until something answers HTTP on `port`, or raise."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if master.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {master.returncode}")
        conn = http.client.HTTPConnection(HOST, port, timeout=2)
        try:
            conn.request("GET", "/healthz")
            conn.getresponse().read()
            return
        except OSError:
            time.sleep(0.1)
        finally:
            conn.close()
    raise RuntimeError(f"gunicorn did not answer on port {port}")


def wait_until_idle(pids: list[int], quiet_s: float = 0.5) -> None:
    """Wait until the processes use no CPU for `quiet_s` (at most START_TIMEOUT_S): gunicorn
    workers load the app after they are forked, and the clients must not start while some
    are still loading it, or the measured phase pays for their start."""
    deadline = time.monotonic() + START_TIMEOUT_S
    used = cpu_seconds(pids)
    while time.monotonic() < deadline:
        time.sleep(quiet_s)
        used, before = cpu_seconds(pids), used
        if used == before:
            return


def cpu_seconds(pids: list[int]) -> float:
    """Return the CPU time (user + system) the processes have used so far."""
    ticks = 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def worker_pids(master_pid: int) -> list[int]:
    """Return the pids of the gunicorn master's children (its workers)."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == master_pid:
                children.append(int(stat.parent.name))
    return sorted(children)
