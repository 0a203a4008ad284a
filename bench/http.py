"""Load over HTTP, side by side with the ceiling: many games through gunicorn on a real Redis.

    .venv/bin/python bench/http.py            # 64 clients, 200 games of 4 players, 1 hand
    .venv/bin/python bench/http.py --quick    # a smaller run that fits in about two minutes
    .venv/bin/python bench/http.py --profile  # also sample the API workers with py-spy

It first measures the ceiling: `bench/hello_app.py`, a Flask hello-world, served by the SAME
gunicorn command line as the service (worker class, workers, connections), hit by the same
clients for a fixed time. Then it starts a real redis-server (AOF, fsync always, as `spinner
serve` runs it) and the service under gunicorn, and the clients create games and play every
seat of each over HTTP (stdlib http.client and orjson, keep-alive, threads in several client
processes): per move a GET of the seat's view (for its legal moves) and a POST of one of them,
with If-Match naming the version it was chosen on, as a careful client sends it.
In both phases the clients start only once every gunicorn worker has loaded its app.
Afterwards every game's export must pass `spinner verify`.

The ratio is the game load's HTTP requests per second over the hello-world's; a move costs
two requests, so moves per second are about half of that. Like the ceiling, whose clients
are all busy for its whole run, the load's figures (`moves_per_s`, `req_per_s`, `ratio`) count
the answers until the first client thread finds no game left to take: from then on fewer and
fewer clients are at work while the last games finish. The whole run's figures are printed
too (`whole_run_moves_per_s`, `whole_run_ratio`). Every loop is bounded in count and time, and
only 127.0.0.1 is ever contacted. The last line printed is one JSON object.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as `python bench/http.py`, this file's folder comes first on sys.path, where this module
# would shadow the standard library's `http` package: put the repository root there instead.
_BENCH = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _BENCH]
if str(_BENCH.parent) not in sys.path:
    sys.path.insert(0, str(_BENCH.parent))

import argparse  # noqa: E402
import collections  # noqa: E402
import contextlib  # noqa: E402
import http.client  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

import orjson  # noqa: E402

from service.entry import processes  # noqa: E402
from service.entry.cli import API_CONNECTIONS, API_WORKER_CLASS, default_api_workers  # noqa: E402
from service.entry.redis_server import RedisServer, free_port  # noqa: E402

HOST = "127.0.0.1"  # the only address this benchmark ever talks to
START_TIMEOUT_S = 30.0
MAX_ERRORS_PER_GAME = 20


# ---------------------------------------------------------------- the gunicorn command line

def gunicorn_command(app: str, port: int, args: argparse.Namespace) -> list[str]:
    """The one gunicorn command line, used for the hello-world and for the service alike."""
    return [sys.executable, "-m", "gunicorn", "--bind", f"{HOST}:{port}",
            "--worker-class", args.worker_class, "--workers", str(args.workers),
            "--worker-connections", str(args.worker_connections),
            "--threads", str(args.threads), "--backlog", "2048", "--log-level", "warning",
            app]


@contextlib.contextmanager
def gunicorn(app: str, env: dict[str, str], args: argparse.Namespace, log: Path) -> Any:
    """Run gunicorn for `app` on a free loopback port until the block ends; yield the port."""
    port = free_port()
    with log.open("ab") as out:
        master = subprocess.Popen(gunicorn_command(app, port, args), env=env,
                                  cwd=_BENCH.parent, stdout=out, stderr=subprocess.STDOUT)
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


# ---------------------------------------------------------------- one HTTP client

class Client:
    """A keep-alive HTTP/1.1 connection to 127.0.0.1 that reconnects after a failure."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: Any = None, token: str | None = None,
                version: int | None = None) -> tuple[int, Any, float]:
        """Send one request (with If-Match if `version` is given); return (status, decoded JSON
        or None, seconds). Status 0: no answer."""
        headers = {"Accept": "application/json"}
        if version is not None:
            headers["If-Match"] = f'"{version}"'
        payload = None
        if body is not None:
            payload = orjson.dumps(body)
            headers["Content-Type"] = "application/json"
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        start = time.perf_counter()
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(HOST, self.port, timeout=30)
            self.conn.request(method, path, payload, headers)
            answer = self.conn.getresponse()
            data = answer.read()
            status = answer.status
        except (OSError, http.client.HTTPException):
            self.close()
            return 0, None, time.perf_counter() - start
        elapsed = time.perf_counter() - start
        try:
            decoded = orjson.loads(data) if data else None
        except ValueError:
            decoded = None
        return status, decoded, elapsed

    def close(self) -> None:
        """Drop the connection."""
        if self.conn is not None:
            self.conn.close()
            self.conn = None


# ---------------------------------------------------------------- client processes

@dataclass
class Tally:
    """What one client process measured."""

    requests: int = 0
    moves: int = 0
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    move_ms: list[float] = field(default_factory=list)
    get_ms: list[float] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)
    done_at: list[float] = field(default_factory=list)  # when each move and view answered
    moves_at: list[float] = field(default_factory=list)  # when each move answered
    drained_at: list[float] = field(default_factory=list)  # when each thread found no game left
    cpu_s: float = 0.0

    def add(self, other: Tally) -> None:
        """Add another tally's counts and samples to this one."""
        for name in ("requests", "moves", "errors", "cpu_s"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("error_samples", "move_ms", "get_ms", "finished", "done_at", "moves_at",
                     "drained_at"):
            getattr(self, name).extend(getattr(other, name))

    def answered(self, is_move: bool) -> None:
        """Count one answered request of the game load (a move or a view), with its time."""
        now = time.perf_counter()
        self.requests += 1
        self.done_at.append(now)
        if is_move:
            self.moves += 1
            self.moves_at.append(now)

    def error(self, what: str) -> None:
        """Count one error answer (or no answer), keeping a few samples."""
        self.errors += 1
        if len(self.error_samples) < 10:
            self.error_samples.append(what)


def play_games(port: int, threads: int, indices: list[int], job: dict[str, Any],
               start: Any, deadline_s: float) -> Tally:
    """Client process: `threads` threads each take the next game of `indices` and play it."""
    tally, lock = Tally(), threading.Lock()
    todo = collections.deque(indices)
    start.wait()
    cpu = time.process_time()
    deadline = time.monotonic() + deadline_s

    def take() -> int | None:
        with lock:
            return todo.popleft() if todo else None

    def run() -> None:
        client, mine = Client(port), Tally()
        while time.monotonic() < deadline and (index := take()) is not None:
            play_one(client, index, job, mine, deadline)
        mine.drained_at.append(time.perf_counter())
        client.close()
        with lock:
            tally.add(mine)

    in_threads(threads, run)
    tally.error_samples = tally.error_samples[:10]
    tally.cpu_s = time.process_time() - cpu
    return tally


def play_one(client: Client, index: int, job: dict[str, Any], tally: Tally,
             deadline: float) -> None:
    """Create game `index`, play random legal moves for every seat to the end, save its export."""
    rng = random.Random(index)
    players = [{"name": f"P{s}", "kind": "human"} for s in range(job["players"])]
    body = {"players": players, "rules": {"hands": job["hands"], "opening": "draw"},
            "seed": index}
    status, created, _ = client.request("POST", "/v1/games", body)
    tally.requests += 1
    if status != 201:
        tally.error(f"create: {status} {created}")
        return
    game_id = created["game_id"]
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    path = f"/v1/games/{game_id}"
    turn, status_text, errors = None, "playing", 0
    while status_text == "playing" and time.monotonic() < deadline:
        if errors > MAX_ERRORS_PER_GAME:
            return
        status, view, seconds = client.request("GET", path, token=tokens.get(turn, tokens[0]))
        if status != 200:
            tally.requests += 1
            tally.error(f"get: {status} {view}")
            errors += 1
            continue
        tally.answered(is_move=False)
        tally.get_ms.append(seconds * 1000)
        status_text = view["status"]
        if status_text != "playing":
            break
        if view["turn"] != turn:  # the first look, or someone else's turn: look as that seat
            turn = view["turn"]
            continue
        move = rng.choice(view["legal_moves"])
        status, answer, seconds = client.request("POST", f"{path}/moves", move, tokens[turn],
                                                 view["version"])
        if status != 200:
            tally.requests += 1
            tally.error(f"move: {status} {answer}")
            errors += 1
            continue
        tally.answered(is_move=True)
        tally.move_ms.append(seconds * 1000)
        turn, status_text = answer["turn"], answer["status"]
    if status_text != "finished":
        return
    status, export, _ = client.request("GET", f"{path}/export")  # not timed: it is the audit
    if status != 200:
        tally.error(f"export: {status} {export}")
        return
    (Path(job["exports"]) / f"{game_id}.json").write_text(json.dumps(export))
    tally.finished.append(game_id)


def hammer_hello(port: int, threads: int, start: Any, seconds: float,
                 max_requests: int) -> Tally:
    """Client process: `threads` threads GET / for `seconds` (at most max_requests each)."""
    tally, lock = Tally(), threading.Lock()
    start.wait()
    cpu = time.process_time()
    deadline = time.monotonic() + seconds

    def run() -> None:
        client, mine = Client(port), Tally()
        for _ in range(max_requests):
            if time.monotonic() >= deadline:
                break
            status, _, elapsed = client.request("GET", "/")
            mine.requests += 1
            if status == 200:
                mine.get_ms.append(elapsed * 1000)
            else:
                mine.error(f"hello: {status}")
        client.close()
        with lock:
            tally.add(mine)

    in_threads(threads, run)
    tally.cpu_s = time.process_time() - cpu
    return tally


def in_threads(count: int, run: Any) -> None:
    """Run `run()` in `count` threads at once and wait until every one has returned."""
    workers = [threading.Thread(target=run) for _ in range(count)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def run_clients(target: Any, per_process: list[Any]) -> tuple[list[Tally], float, float]:
    """Run `target` in one client process per entry, all let go at once; return the tallies,
    the seconds and the perf_counter when they were let go (the same clock in every process).

    Each entry is a function of the shared start event that returns the target's arguments;
    the clock runs from the moment every process is let go until the last one is done.
    """
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        start = manager.Event()
        with context.Pool(len(per_process)) as pool:
            pending = [pool.apply_async(target, call(start)) for call in per_process]
            time.sleep(1.0)  # let every process import and reach the start line
            began = time.perf_counter()
            start.set()
            tallies = [p.get(timeout=3600) for p in pending]
            elapsed = time.perf_counter() - began
    return tallies, elapsed, began


def merged(tallies: list[Tally]) -> Tally:
    """Add the client processes' tallies up."""
    total = Tally()
    for tally in tallies:
        total.add(tally)
    return total


def percentile(values: list[float], fraction: float) -> float:
    """Return the nearest-rank percentile of `values` (0 when empty)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def split(total: int, parts: int) -> list[int]:
    """Split `total` clients over `parts` processes as evenly as possible."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


# ---------------------------------------------------------------- profiling (py-spy)

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
    for marker in ("site-packages/", "/lib/python3.", "/work/main/"):
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


# ---------------------------------------------------------------- the run

def verify_exports(exports: Path) -> int:
    """Run `spinner verify` (service.entry.cli.main) on every export; return how many pass."""
    from service.entry.cli import main as spinner

    passed = 0
    for path in sorted(exports.glob("*.json")):
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()) as err:
            code = spinner(["verify", str(path)])
        if code == 0:
            passed += 1
        else:
            print(f"verify failed: {err.getvalue().strip()}")
    return passed


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Read the command line; --quick swaps in smaller defaults."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="a smaller run (about 2 minutes)")
    parser.add_argument("--clients", type=int, help="concurrent clients (default 64; quick 32)")
    parser.add_argument("--games", type=int, help="games to play (default 200; quick 48)")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--hands", type=int, default=1, help="hands a match (1 keeps it short)")
    parser.add_argument("--client-procs", type=int, default=2, help="client processes")
    parser.add_argument("--workers", type=int, default=default_api_workers(),
                        help="gunicorn workers (default: as `spinner serve`, 2 a core)")
    parser.add_argument("--worker-connections", type=int, default=API_CONNECTIONS,
                        help="connections a gevent worker serves (default: as `spinner serve`)")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads a worker, for a try of --worker-class gthread")
    parser.add_argument("--worker-class", default=API_WORKER_CLASS,
                        help="gunicorn worker class (default: as `spinner serve`)")
    parser.add_argument("--hello-seconds", type=float, help="ceiling run (default 15; quick 6)")
    parser.add_argument("--max-seconds", type=float, help="bound on the game phase "
                                                          "(default 600; quick 90)")
    parser.add_argument("--no-aof", action="store_true", help="run Redis without AOF")
    parser.add_argument("--rate-limits", action="store_true",
                        help="keep the rate limits on (set too high to trip), to measure them")
    parser.add_argument("--profile", action="store_true", help="sample the workers (py-spy)")
    args = parser.parse_args(argv)
    quick = args.quick
    args.clients = args.clients or (32 if quick else 64)
    args.games = args.games or (48 if quick else 200)
    args.hello_seconds = args.hello_seconds or (6.0 if quick else 15.0)
    args.max_seconds = args.max_seconds or (90.0 if quick else 600.0)
    args.client_procs = max(1, min(args.client_procs, args.clients))
    return args


@dataclass
class Phase:
    """One measured phase: what the clients saw, its wall time and the servers' CPU time."""

    tally: Tally
    seconds: float
    server_cpu_s: float
    redis_cpu_s: float = 0.0
    began: float = 0.0

    @property
    def per_s(self) -> float:
        """Requests per second."""
        return self.tally.requests / self.seconds

    @property
    def busy_seconds(self) -> float:
        """Seconds from the start until the first client thread found no game left to play:
        until then every client was busy, as in the ceiling's run."""
        return min(self.tally.drained_at, default=self.began + self.seconds) - self.began

    def busy_per_s(self, times: list[float]) -> float:
        """Answers per second among `times` while every client was busy."""
        end = self.began + self.busy_seconds
        return sum(1 for t in times if t <= end) / max(self.busy_seconds, 1e-9)

    def cpu_ms(self, cpu_s: float) -> float:
        """CPU milliseconds a request."""
        return 1000 * cpu_s / max(self.tally.requests, 1)


def measure_hello(env: dict[str, str], args: argparse.Namespace, layout: list[int],
                  log: Path) -> Phase:
    """The ceiling: the same clients GET the hello-world's / for --hello-seconds."""
    with gunicorn("bench.hello_app:app", env, args, log) as (port, master):
        cap = int(args.hello_seconds * 20000)  # requests a thread: a bound never reached
        servers = [master, *worker_pids(master)]
        cpu = cpu_seconds(servers)
        tallies, seconds, _ = run_clients(hammer_hello, [
            lambda start, n=n: (port, n, start, args.hello_seconds, cap) for n in layout])
        phase = Phase(merged(tallies), seconds, cpu_seconds(servers) - cpu)
    print(f"ceiling: {phase.tally.requests} hello-world requests in {seconds:.1f} s = "
          f"{phase.per_s:.0f} req/s, p50 {percentile(phase.tally.get_ms, .5):.2f} ms, "
          f"p99 {percentile(phase.tally.get_ms, .99):.2f} ms, errors {phase.tally.errors}; "
          f"cpu a request: gunicorn {phase.cpu_ms(phase.server_cpu_s):.2f} ms, "
          f"clients {phase.cpu_ms(phase.tally.cpu_s):.2f} ms")
    return phase


def measure_games(env: dict[str, str], args: argparse.Namespace, layout: list[int],
                  work: Path, exports: Path) -> Phase:
    """The load: a real redis-server and the service under gunicorn; games played to the end."""
    redis = RedisServer(work / "redis", appendonly=not args.no_aof).start()
    try:
        game_env = {**env, "REDIS_URL": redis.url}
        with gunicorn("service.entry.wsgi:app", game_env, args,
                      work / "gunicorn-api.log") as (port, master):
            job = {"players": args.players, "hands": args.hands, "exports": str(exports)}
            spies = start_profilers(master, min(args.max_seconds, 30), work) \
                if args.profile else []
            servers, redis_pids = [master, *worker_pids(master)], [redis.pid or 0]
            cpu = cpu_seconds(servers), cpu_seconds(redis_pids)
            tallies, seconds, began = run_clients(play_games, [
                lambda start, n=n, i=i: (port, n, list(range(i, args.games, len(layout))),
                                         job, start, args.max_seconds)
                for i, n in enumerate(layout)])
            phase = Phase(merged(tallies), seconds, cpu_seconds(servers) - cpu[0],
                          cpu_seconds(redis_pids) - cpu[1], began)
            for spy in spies:
                spy.wait(60)
    finally:
        redis.stop()
    load = phase.tally
    print(f"games: {len(load.finished)}/{args.games} finished, {load.moves} moves, "
          f"{load.requests} requests in {seconds:.1f} s = {load.moves / seconds:.0f} moves/s, "
          f"{phase.per_s:.0f} req/s; cpu a request: gunicorn "
          f"{phase.cpu_ms(phase.server_cpu_s):.2f} ms, redis-server "
          f"{phase.cpu_ms(phase.redis_cpu_s):.2f} ms, clients {phase.cpu_ms(load.cpu_s):.2f} ms")
    print(f"while every client was busy (first {phase.busy_seconds:.1f} s): "
          f"{phase.busy_per_s(load.moves_at):.0f} moves/s, {phase.busy_per_s(load.done_at):.0f} "
          f"req/s")
    print(f"latency: move p50 {percentile(load.move_ms, .5):.2f} ms, "
          f"p99 {percentile(load.move_ms, .99):.2f} ms; state GET "
          f"p50 {percentile(load.get_ms, .5):.2f} ms, p99 {percentile(load.get_ms, .99):.2f} ms")
    return phase


def main(argv: list[str] | None = None) -> int:
    """Measure the ceiling, the game load, the ceiling again; print figures and one JSON line.

    The ceiling is measured before and after the load and averaged, so that a machine whose
    load changes during the run (other jobs on its two cores) skews the ratio less.
    """
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="spinner-bench-"))
    exports = work / "exports"
    exports.mkdir()
    (work / "metrics").mkdir()  # the workers' shared metrics files, as `spinner serve` has them
    limit = str(10**9) if args.rate_limits else "0"  # 0: off; 64 clients share one address
    env = {**os.environ, "PYTHONPATH": str(_BENCH.parent), "PROMETHEUS_MULTIPROC_DIR":
           str(work / "metrics"), "RATE_LIMIT_PER_TOKEN": limit, "RATE_LIMIT_PER_ADDRESS": limit}
    layout = split(args.clients, args.client_procs)
    print(f"gunicorn: {' '.join(gunicorn_command('APP', 0, args)[3:])}")
    print(f"clients: {args.clients} threads in {len(layout)} processes; "
          f"{args.games} games of {args.players} players, {args.hands} hand(s); "
          f"redis {'without AOF' if args.no_aof else 'AOF, fsync always'}; "
          f"rate limits {'on' if args.rate_limits else 'off'}")
    try:
        before = measure_hello(env, args, layout, work / "gunicorn-hello.log")
        game = measure_games(env, args, layout, work, exports)
        after = measure_hello(env, args, layout, work / "gunicorn-hello.log")
        verified = verify_exports(exports)
        if args.profile:
            report_profile(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    load, hellos = game.tally, (before, after)
    hello_rps = sum(h.per_s for h in hellos) / 2
    hello_cpu_ms = sum(h.cpu_ms(h.server_cpu_s) for h in hellos) / 2
    errors = load.errors + sum(h.tally.errors for h in hellos)
    busy_rps = game.busy_per_s(load.done_at)
    figures = {
        "moves_per_s": round(game.busy_per_s(load.moves_at), 1),
        "p50_ms": round(percentile(load.move_ms, .5), 2),
        "p99_ms": round(percentile(load.move_ms, .99), 2),
        "hello_req_per_s": round(hello_rps, 1),
        "ratio": round(busy_rps / hello_rps, 3),
        "errors": errors,
        "verified_games": verified,
        "req_per_s": round(busy_rps, 1),
        "whole_run_moves_per_s": round(load.moves / game.seconds, 1),
        "whole_run_ratio": round(game.per_s / hello_rps, 3),
        "cpu_ratio": round(hello_cpu_ms / game.cpu_ms(game.server_cpu_s), 3),
        "games": args.games,
        "finished_games": len(load.finished),
    }
    print(f"ratio to the ceiling: {figures['ratio']} in requests/s while every client was busy, "
          f"{figures['whole_run_ratio']} over the whole run "
          f"(moves/s over hello req/s: {figures['moves_per_s'] / hello_rps:.3f}); "
          f"{figures['cpu_ratio']} in server CPU a request")
    samples = load.error_samples + [e for h in hellos for e in h.tally.error_samples]
    print(f"errors: {errors} {samples[:8]}")
    print(f"verified: {verified}/{args.games} exports pass `spinner verify`")
    print(json.dumps(figures))
    return 0 if errors == 0 and verified == args.games else 1


if __name__ == "__main__":
    sys.exit(main())
