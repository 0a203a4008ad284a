"""AI strength, measured by duplicate matches: the same deals, every seat rotation.

    python -m bench.ai            # the full run: tighter intervals, about 40 minutes on two cores
    python -m bench.ai --quick    # a smaller run, under five minutes on two cores

A deal is a match seed: every hand of the match is dealt from it (R5), so replaying it with
the seats swapped (two players) or with the hero in each seat (four players) gives both
sides the same tiles. A hand is won by its R22 winner. Each interval is a 95% normal
interval over deals x hand numbers ("boards"), each board averaged over its rotations.
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from multiprocessing import Pool
from typing import Any

from bench.ai_latency import measure, quiet_logs
from service.rules.moves import Move
from tests.support.arena import Player, play_ai_match
from workers.ai import choose_move
from workers.ai.seat_view import SeatView

Board = tuple[int, int]
"""(deal seed, hand number)."""

Result = tuple[Board, bool, int, float]
"""One hand as the hero saw it: board, won (R22), hero points, the others' mean points."""


@dataclass(frozen=True)
class Pairing:
    """One hero level against `seats - 1` copies of a villain level, over `deals` deals."""

    key: str
    hero: str
    villain: str
    seats: int
    deals: int
    hands: int


def plan(quick: bool) -> list[Pairing]:
    """Return the pairings to play: the full run, or the quick one."""
    if quick:
        return [Pairing("greedy_vs_random", "greedy", "random", 2, 40, 5),
                Pairing("expert_vs_greedy", "expert", "greedy", 2, 6, 5),
                Pairing("expert_4p", "expert", "greedy", 4, 3, 5)]
    return [Pairing("greedy_vs_random", "greedy", "random", 2, 100, 10),
            Pairing("expert_vs_greedy", "expert", "greedy", 2, 36, 10),
            Pairing("expert_4p", "expert", "greedy", 4, 18, 10)]


def player(level: str, budget_s: float) -> Player:
    """Return a player of `level` that searches for `budget_s` seconds a move."""
    def play(view: SeatView, rng: random.Random) -> Move:
        return choose_move(level, view, rng, budget_s)
    return play


def play_deal(pairing: Pairing, budget_s: float, seed: int) -> list[Result]:
    """Play one deal in every rotation; return each hand as the hero saw it."""
    rules = {"hands": pairing.hands, "opening": "draw"}
    results: list[Result] = []
    for hero_seat in range(pairing.seats):
        players = [player(pairing.villain, budget_s)] * pairing.seats
        players[hero_seat] = player(pairing.hero, budget_s)
        rng = random.Random(f"{seed}:{hero_seat}")
        state, _ = play_ai_match(players, rules, seed, rng)
        for score in state.scores:
            pts = score["points"]
            others = (sum(pts) - pts[hero_seat]) / (pairing.seats - 1)
            results.append(((seed, score["hand_number"]), score["winner"] == hero_seat,
                            pts[hero_seat], others))
    return results


def interval(samples: list[float]) -> tuple[float, list[float]]:
    """Return the mean and its 95% normal interval."""
    mean = statistics.fmean(samples)
    half = 1.96 * statistics.stdev(samples) / math.sqrt(len(samples)) if len(samples) > 1 else 0
    return mean, [round(mean - half, 3), round(mean + half, 3)]


def summarize(pairing: Pairing, results: Iterable[Result]) -> dict[str, Any]:
    """Return win rate and mean points per hand, with intervals over boards."""
    boards: dict[Board, list[Result]] = {}
    for result in results:
        boards.setdefault(result[0], []).append(result)
    rows = list(boards.values())
    win, win_ci = interval([statistics.fmean(r[1] for r in row) for row in rows])
    hero, hero_ci = interval([statistics.fmean(r[2] for r in row) for row in rows])
    others, others_ci = interval([statistics.fmean(r[3] for r in row) for row in rows])
    return {"win": round(win, 3), "win_ci95": win_ci, "hero_points": round(hero, 2),
            "hero_points_ci95": hero_ci, "others_points": round(others, 2),
            "others_points_ci95": others_ci, "hands": sum(map(len, rows))}


def reply_latency() -> dict[str, float | int]:
    """AI reply latency in ms, from a human move's answer to the greedy AI's reply in the
    log, through the real API, queue and worker, at 2- and 4-player tables."""
    quiet_logs()
    return measure()


def run(pairing: Pairing, budget_s: float, jobs: int) -> dict[str, Any]:
    """Play every deal of a pairing in `jobs` processes and summarize it."""
    work = partial(play_deal, pairing, budget_s)
    seeds = range(1, pairing.deals + 1)
    with Pool(jobs) as pool:
        results = [r for deal in pool.imap_unordered(work, seeds) for r in deal]
    return summarize(pairing, results)


def report(pairing: Pairing, s: dict[str, Any], seconds: float) -> None:
    """Print one pairing's figures."""
    print(f"{pairing.hero} vs {pairing.seats - 1} {pairing.villain} ({s['hands']} hands, "
          f"{seconds:.0f} s): hero wins {s['win']:.1%} {s['win_ci95']}; points per hand: "
          f"hero {s['hero_points']} {s['hero_points_ci95']}, "
          f"others {s['others_points']} {s['others_points_ci95']}", flush=True)


def main() -> None:
    """Play the pairings, print their figures, then the summary JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a run under five minutes")
    parser.add_argument("--budget", type=float, default=0.3, help="expert seconds per move")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    began = time.perf_counter()
    summary: dict[str, dict[str, Any]] = {}
    for pairing in plan(args.quick):
        start = time.perf_counter()
        summary[pairing.key] = run(pairing, args.budget, args.jobs)
        report(pairing, summary[pairing.key], time.perf_counter() - start)
    print(json.dumps(figures(summary, args.budget, time.perf_counter() - began)))


def figures(summary: dict[str, dict[str, Any]], budget_s: float,
            seconds: float) -> dict[str, Any]:
    """Return the summary line's figures."""
    gr, eg, e4 = summary["greedy_vs_random"], summary["expert_vs_greedy"], summary["expert_4p"]
    return {
        "greedy_vs_random_win": gr["win"], "greedy_vs_random_ci95": gr["win_ci95"],
        "expert_vs_greedy_win": eg["win"], "expert_vs_greedy_ci95": eg["win_ci95"],
        "expert_vs_greedy_points": [eg["hero_points"], eg["others_points"]],
        "expert_4p_win": e4["win"], "expert_4p_win_ci95": e4["win_ci95"],
        "expert_4p_mean_points": e4["hero_points"],
        "expert_4p_points_ci95": e4["hero_points_ci95"],
        "greedy_4p_mean_points": e4["others_points"],
        "greedy_4p_points_ci95": e4["others_points_ci95"],
        **reply_latency(),
        "hands_played": sum(s["hands"] for s in summary.values()),
        "expert_budget_s": budget_s, "seconds": round(seconds),
    }


if __name__ == "__main__":
    main()
