"""All Fives AI strength by duplicate matches (ALLFIVES.md): the same deals, every rotation.

    python -m bench.ai_fives            # the full run, about ten minutes on two cores
    python -m bench.ai_fives --quick    # a smaller run, about a minute

A deal is a match seed: every hand of the match to 150 (F15) is dealt from it, so playing
it with the seats swapped (two players) or with the hero in each seat (four) gives both
sides the same tiles. A match is won by the seat reaching the target; points are what a
seat scored a hand, plays and hand ends together (F10, F12, F13). Each interval is a 95%
normal interval over deals, each deal averaged over its rotations. The expert searches
`--budget` seconds a move (0.1 by default: the service gives it `AI_BUDGET_S`, 0.3).
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from dataclasses import replace
from functools import partial
from multiprocessing import Pool
from typing import Any

from bench.ai import Pairing, Result, summarize
from bench.ai import plan as spinner_plan
from service.rules.moves import Move
from tests.support.arena import Player, play_ai_match
from workers.ai.allfives import choose_fives_move
from workers.ai.allfives.view import FivesView, fives_view

TARGET = 150


DEALS = {True: (40, 6, 2), False: (300, 60, 16)}
"""Deals of each of `bench.ai`'s pairings, quick and full: All Fives matches are longer."""


def plan(quick: bool) -> list[Pairing]:
    """Return `bench.ai`'s pairings with All Fives' numbers of deals (`hands` is unused: a
    match runs to the target)."""
    return [replace(pairing, deals=deals)
            for pairing, deals in zip(spinner_plan(quick), DEALS[quick], strict=True)]


def player(level: str, budget_s: float) -> Player:
    """Return an All Fives player of `level` that searches `budget_s` seconds a move."""
    return partial(_choose, level, budget_s)


def _choose(level: str, budget_s: float, view: FivesView, rng: random.Random) -> Move:
    return choose_fives_move(level, view, rng, budget_s)


def play_deal(pairing: Pairing, budget_s: float, seed: int) -> list[Result]:
    """Play one deal in every rotation; return each match as the hero saw it."""
    results: list[Result] = []
    for hero in range(pairing.seats):
        players = [player(pairing.villain, budget_s)] * pairing.seats
        players[hero] = player(pairing.hero, budget_s)
        state, _ = play_ai_match(players, {"variant": "all_fives", "target": TARGET}, seed,
                                 random.Random(f"{seed}:{hero}"), fives_view)
        hands = len(state.scores)
        others = (sum(state.totals) - state.totals[hero]) / (pairing.seats - 1)
        results.append(((seed, 0), state.winners == [hero], state.totals[hero] / hands,
                        others / hands))
    return results


def run(pairing: Pairing, budget_s: float, jobs: int) -> dict[str, Any]:
    """Play every deal of a pairing in `jobs` processes and summarize it."""
    with Pool(jobs) as pool:
        deals = pool.imap_unordered(partial(play_deal, pairing, budget_s),
                                    range(1, pairing.deals + 1))
        return summarize(pairing, [r for deal in deals for r in deal])


def main() -> None:
    """Play the pairings, print their figures, then the summary JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a run of about a minute")
    parser.add_argument("--budget", type=float, default=0.1, help="expert seconds a move")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    summary: dict[str, Any] = {"budget_s": args.budget, "target": TARGET}
    for pairing in plan(args.quick):
        start = time.perf_counter()
        s = run(pairing, args.budget, args.jobs)
        summary[pairing.key] = s
        print(f"{pairing.hero} vs {pairing.seats - 1} {pairing.villain}: {s['hands']} matches "
              f"({time.perf_counter() - start:.0f} s), hero wins {s['win']:.1%} "
              f"{s['win_ci95']}; points a hand: hero {s['hero_points']} "
              f"{s['hero_points_ci95']}, others {s['others_points']} "
              f"{s['others_points_ci95']}", flush=True)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
