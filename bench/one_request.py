"""Where a move's server CPU goes on the one-request path (issue 21), by process.

    python -m bench.one_request [--slots 16] [--games 4] [--client PATH] [--profile]

Starts `spinner serve` (its embedded redis-server, AOF with fsync always, its gunicorn
gevent workers and rq workers) in a session of its own, runs one process of a peer-bench
client against it (`bench/peer_client.py` by default: one POST a move, each seat's state
pushed on its stream; `--client` names another of the same interface, such as the peer
bench's client_a.py, GET then POST), and prints the server's CPU time a move split by
process (the API workers, redis-server, the rq workers), moves/s and the POST latency.
`--profile` samples the API workers with py-spy (`pip install py-spy`) meanwhile and prints
where their busy time went. The client runs in a Python with aiohttp and orjson: the peer
bench's venv (~/.cache/peer-bench/venv, made by its run.sh) or `--client-python`.
Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench import ROOT
from bench.load.profiling import report_profile, start_profilers
from bench.load.servers import cpu_seconds, wait_until_idle, worker_pids
from service.entrypoints.redis_server import free_port

HOST = "127.0.0.1"
PEER_VENV = Path.home() / ".cache" / "peer-bench" / "venv" / "bin" / "python"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Read the command line."""
    parser = argparse.ArgumentParser(prog="python -m bench.one_request",
                                     description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--slots", type=int, default=16, help="concurrent games (16)")
    parser.add_argument("--games", type=int, default=4, help="games a slot plays (4)")
    parser.add_argument("--client", type=Path, default=ROOT / "bench" / "peer_client.py")
    parser.add_argument("--client-python", type=Path,
                        default=PEER_VENV if PEER_VENV.exists() else Path(sys.executable))
    parser.add_argument("--profile", action="store_true", help="sample the API workers")
    parser.add_argument("--out", type=Path, help="keep the py-spy samples in this folder")
    return parser.parse_args(argv)


def session_pids(sid: int) -> dict[str, list[int]]:
    """Return the processes of session `sid` by kind: api, redis, rq, other."""
    kinds: dict[str, list[int]] = collections.defaultdict(list)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid:
            kinds[_kind(cmdline)].append(int(stat.parent.name))
    return kinds


def _kind(cmdline: str) -> str:
    if "redis-server" in cmdline:
        return "redis"
    if "gunicorn" in cmdline:
        return "api"
    if " worker" in cmdline:
        return "rq"
    return "other"


def cpu_by_kind(sid: int) -> dict[str, float]:
    """Return the CPU seconds each kind of process of the session has used so far."""
    return {kind: cpu_seconds(pids) for kind, pids in session_pids(sid).items()}


def start_server(data_dir: Path) -> tuple[subprocess.Popen[bytes], int]:
    """Start `spinner serve` in a session of its own, without the rate limits (as the peer
    bench does); return it and its port once /healthz answers and it is idle."""
    port = free_port()
    env = {**os.environ, "RATE_LIMIT_PER_ADDRESS": "0", "RATE_LIMIT_PER_TOKEN": "0"}
    for name in ("REDIS_URL", "QUEUE_REDIS_URL", "SPINNER_REDIS_URL"):
        env.pop(name, None)
    spinner = Path(sys.executable).parent / "spinner"
    server = subprocess.Popen([str(spinner), "serve", "--port", str(port), "--data-dir",
                               str(data_dir)], env=env, cwd=ROOT, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://{HOST}:{port}/healthz", timeout=2):
                break
        except OSError:
            time.sleep(0.2)
    else:
        stop_server(server)
        raise RuntimeError("spinner serve did not answer /healthz")
    wait_until_idle([p for pids in session_pids(server.pid).values() for p in pids])
    return server, port


def stop_server(server: subprocess.Popen[bytes]) -> None:
    """Stop the server's session as a Ctrl-C would, then wait for it."""
    try:
        os.killpg(server.pid, signal.SIGINT)
        server.wait(60)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(10)


def run_client(args: argparse.Namespace, port: int, server: subprocess.Popen[bytes],
               out_dir: Path) -> tuple[dict, dict[str, float], float]:
    """Run the client's timed phase; return its FINISHED tally, the server's CPU seconds by
    kind of process, and the phase's wall seconds."""
    client = subprocess.Popen([str(args.client_python), str(args.client), str(port), "0",
                               str(args.slots), str(args.games)], cwd=args.client.parent,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert client.stdin is not None and client.stdout is not None
    if client.stdout.readline().strip() != "READY":
        raise RuntimeError("the client did not say READY")
    spies = []
    if args.profile:
        master = max(session_pids(server.pid)["api"], key=lambda p: len(worker_pids(p)))
        spies = start_profilers(master, 3600, out_dir)
    before, start = cpu_by_kind(server.pid), time.monotonic()
    client.stdin.write("GO\n")
    client.stdin.flush()
    line = client.stdout.readline()
    wall = time.monotonic() - start
    time.sleep(0.5)  # the AOF's last writes, the last frames
    after = cpu_by_kind(server.pid)
    for spy in spies:
        spy.send_signal(signal.SIGINT)
        spy.wait(30)
    client.wait(30)
    if not line.startswith("FINISHED "):
        raise RuntimeError(f"the client ended without FINISHED: {line!r}")
    used = {kind: after.get(kind, 0.0) - before.get(kind, 0.0) for kind in after}
    return json.loads(line[len("FINISHED "):]), used, wall


def main(argv: list[str] | None = None) -> int:
    """Run the bench; print its figures and one JSON line."""
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="one-request-") as tmp:
        server, port = start_server(Path(tmp) / "data")
        try:
            tally, used, wall = run_client(args, port, server, Path(tmp))
        finally:
            stop_server(server)
        if args.profile:
            report_profile(Path(tmp))
            if args.out:
                args.out.mkdir(parents=True, exist_ok=True)
                for path in Path(tmp).glob("spy-*.txt"):
                    (args.out / path.name).write_bytes(path.read_bytes())
    moves = tally["moves"] or 1
    per_move = {kind: round(seconds * 1000 / moves, 3) for kind, seconds in used.items()}
    lat = sorted(tally["lat_ms"]) or [0.0]
    figures = {"client": args.client.name, "slots": args.slots, "games": args.games,
               "moves": tally["moves"], "errors": tally["errors"],
               "moves_per_s": round(tally["moves"] / wall, 1),
               "server_cpu_ms_per_move": round(sum(used.values()) * 1000 / moves, 3),
               "cpu_ms_per_move_by_process": per_move,
               "post_p50_ms": round(lat[len(lat) // 2], 2),
               "post_p99_ms": round(lat[int(0.99 * (len(lat) - 1))], 2),
               "loadavg": os.getloadavg()[0]}
    for name, value in figures.items():
        print(f"{name}: {value}")
    print(json.dumps(figures))
    return 0 if tally["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
