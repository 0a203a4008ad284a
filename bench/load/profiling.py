"""Profiling the API workers under load: py-spy samples, and where their busy time went."""

from __future__ import annotations

import collections
import shutil
import subprocess
import sys
from pathlib import Path

from bench import ROOT
from bench.load.servers import worker_pids

TRIMMED: tuple[str, ...] = ("site-packages/", "/lib/python3.", f"{ROOT}/")
"""What a frame's file name is cut after: an installed package's folder, the standard
library's, this repository's root."""


def find_py_spy() -> str | None:
    """Return a py-spy binary: on PATH or beside this Python; None when absent."""
    beside = Path(sys.executable).parent / "py-spy"
    return shutil.which("py-spy") or (str(beside) if beside.exists() else None)


def start_profilers(master_pid: int, seconds: float,
                    out_dir: Path) -> list[subprocess.Popen[bytes]]:
    """Sample every gunicorn worker with py-spy for `seconds`: raw collapsed stacks of the
    thread holding the GIL, so the samples show where the workers' Python CPU time goes."""
    spy = find_py_spy()
    if spy is None:
        print("profile: py-spy is not installed (pip install py-spy); skipped")
        return []
    return [subprocess.Popen([spy, "record", "--pid", str(pid), "--gil", "--nonblocking",
                              "--duration", str(max(1, int(seconds))), "--rate", "200",
                              "--format", "raw", "--output", str(out_dir / f"spy-{pid}.txt")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for pid in worker_pids(master_pid)]


def report_profile(out_dir: Path, top: int = 16) -> None:
    """Print where the workers' busy samples went: by frame (inclusive) and by leaf (self)."""
    inclusive: collections.Counter[str] = collections.Counter()
    leaf: collections.Counter[str] = collections.Counter()
    busy = 0
    for path in out_dir.glob("spy-*.txt"):
        for line in path.read_text().splitlines():
            stack, _, count_text = line.rpartition(" ")
            if not stack or not count_text.isdigit():
                continue
            frames = [_frame(f) for f in stack.split(";")]
            count = int(count_text)
            if _idle(frames):
                continue
            busy += count
            leaf[frames[-1]] += count
            for frame in set(frames):
                inclusive[frame] += count
    if not busy:
        print("profile: no busy samples")
        return
    print(f"profile: {busy} samples of the GIL holder in the API workers")
    print("  inclusive (share of busy time spent in or under a function):")
    generic = ("(gunicorn/", "threading.py", "concurrent/futures", "flask/app.py")
    shown = [(f, n) for f, n in inclusive.most_common()
             if not any(g in f for g in generic)][:top + 10]
    for frame, count in shown:
        print(f"    {100 * count / busy:5.1f}%  {frame}")
    print("  self (the leaf frame):")
    for frame, count in leaf.most_common(top):
        print(f"    {100 * count / busy:5.1f}%  {frame}")


def _frame(text: str) -> str:
    name, _, where = text.partition(" (")
    where = where.rstrip(")")
    for marker in TRIMMED:
        if marker in where:
            where = where.split(marker, 1)[1]
    return f"{name} ({where.rsplit(':', 1)[0]})"


def _idle(frames: list[str]) -> bool:
    """Whether a stack is not serving a request: a thread waiting for work, or a worker still
    importing the app (the clients may start before every worker has loaded it)."""
    last = frames[-1]
    return any(word in last for word in ("select (", "wait (", "accept (", "poll (",
                                         "_wait_for_tstate_lock", "sleep (")) \
        or any(frame.startswith("_find_and_load ") for frame in frames)
