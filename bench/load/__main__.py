"""The load bench's command line: `python -m bench.load [--quick] [--profile] [...]`."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from bench import ROOT, load
from bench.load.clients import split
from bench.load.phases import measure_floor, measure_games, measure_hello, verify_exports
from bench.load.profiling import report_profile
from bench.load.report import figures, floor_figures, notify_figures, print_summary
from bench.load.servers import gunicorn_command
from service.entrypoints.cli import API_CONNECTIONS, API_WORKER_CLASS, default_api_workers

NOTIFY_LEGS = (False, True, True, False)
"""--notify's game phases, notified or not: ABBA, so that a machine slowing down or speeding
up through the run weighs on both alike."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Read the command line; --quick swaps in smaller defaults."""
    parser = argparse.ArgumentParser(prog="python -m bench.load",
                                     description=(load.__doc__ or "").split("\n", 1)[0])
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
    parser.add_argument("--gzip", action="store_true",
                        help="clients send Accept-Encoding: gzip (and decode the answers)")
    parser.add_argument("--notify", action="store_true",
                        help="game phases without and with turn notifications (ABBA, "
                             "--notify-rounds times), each game notified at a receiver on "
                             "loopback in the latter")
    parser.add_argument("--floor", action="store_true",
                        help="also measure the steps between the ceiling and a game request: "
                             "the hello-world after one Redis round trip, and the service's "
                             "404 for a game that does not exist")
    parser.add_argument("--notify-rounds", type=int, default=2,
                        help="ABBA rounds of --notify (default 2: eight game phases)")
    args = parser.parse_args(argv)
    quick = args.quick
    args.clients = args.clients or (32 if quick else 64)
    args.games = args.games or (48 if quick else 200)
    args.hello_seconds = args.hello_seconds or (6.0 if quick else 15.0)
    args.max_seconds = args.max_seconds or (90.0 if quick else 600.0)
    args.client_procs = max(1, min(args.client_procs, args.clients))
    return args


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
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PROMETHEUS_MULTIPROC_DIR":
           str(work / "metrics"), "RATE_LIMIT_PER_TOKEN": limit, "RATE_LIMIT_PER_ADDRESS": limit,
           "WEBHOOKS_ALLOW_PRIVATE": "1"}  # the receiver is on loopback
    notified = NOTIFY_LEGS * args.notify_rounds if args.notify else (False,)
    layout = split(args.clients, args.client_procs)
    print(f"gunicorn: {' '.join(gunicorn_command('APP', 0, args)[3:])}")
    print(f"clients: {args.clients} threads in {len(layout)} processes; "
          f"{args.games} games of {args.players} players, {args.hands} hand(s); "
          f"redis {'without AOF' if args.no_aof else 'AOF, fsync always'}; "
          f"rate limits {'on' if args.rate_limits else 'off'}; "
          f"Accept-Encoding: {'gzip' if args.gzip else 'none'}"
          + (f"; with and without notifications, {2 * args.notify_rounds} phases each"
             if args.notify else ""))
    try:
        before = measure_hello(env, args, layout, work / "gunicorn-hello.log")
        legs = [(notify, measure_games(env, args, layout, work, exports, notify))
                for notify in notified]
        floor = measure_floor(env, args, layout, work) if args.floor else None
        after = measure_hello(env, args, layout, work / "gunicorn-hello.log")
        verified = verify_exports(exports)
        if args.profile:
            report_profile(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    game = legs[0][1]
    summary = figures(game, (before, after), verified, args.games * len(legs))
    summary["finished_games"] = sum(len(phase.tally.finished) for _, phase in legs)
    if args.notify:
        summary.update(notify_figures(legs))
    if floor is not None:
        summary.update(floor_figures(floor, (before, after)))
    print_summary(summary, game, (before, after))
    errors = summary["errors"] + sum(phase.tally.errors for _, phase in legs[1:]) \
        + sum(phase.tally.errors for phase in floor or ())
    return 0 if errors == 0 and verified == summary["games"] else 1


if __name__ == "__main__":
    sys.exit(main())
