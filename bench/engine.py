"""Engine benchmark: random self-play, legal-move listing, and the `dominoes` package baseline.

    python -m bench.engine           # about half a minute; the last line is one JSON object
    python -m bench.engine --long    # first the invariant sweeps of the tests: 100,000
                                     # Spinner hands, then 10,000 All Fives hands

All Fives (ALLFIVES.md) self-play is timed beside Spinner's, matches to 150 at 2, 3 and 4
seats, and its actions a second set against the same baseline.

Self-play goes through the real commands (`make_move`), unsealed as simulations run.
The baseline is the PyPI `dominoes` package (a bench-only dependency): random players in
its 4-player double-six block game, counting its moves (plays and the passes it records).
Each figure is the best of many short rounds, interleaved, so that other load on the
machine hits ours and the baseline alike and the quiet moments count for both.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from importlib.metadata import version
from typing import Any

import dominoes  # type: ignore[import-untyped]  # bench-only, untyped

from service.game import events as ev
from service.game.state import GameState
from service.rules.hand import Hand
from service.rules.moves import Move
from service.rules.turns import legal_moves
from tests.support.fives_selfplay import FivesChecker, fives_sweep, play_fives_match
from tests.support.selfplay import Checker, play_random_match, sweep

ACTIONS = (ev.TILE_PLAYED, ev.TILE_DRAWN, ev.PASSED)
SEATS = (2, 4, 8)
FIVES_SEATS = (2, 3, 4)
LONG_GAMES = 10_000  # ten hands each
LONG_FIVES_HANDS = 10_000


def timed(work: Callable[[], Counter[str]]) -> tuple[float, Counter[str]]:
    """Run `work`; return the seconds it took and what it counted."""
    start = time.perf_counter()
    counted = work()
    return time.perf_counter() - start, counted


def self_play(seats: int, games: int, seed: int) -> Counter[str]:
    """Play `games` ten-hand matches of random moves (both opening rules); tally the events."""
    tally: Counter[str] = Counter()
    for game in range(games):
        rules = {"hands": 10, "opening": ("draw", "next_lower")[game % 2]}
        play_random_match(seats, rules, random.Random(seed + game), tally)
    return tally


def fives_play(seats: int, games: int, seed: int) -> Counter[str]:
    """Play `games` All Fives matches to 150 of random moves; tally the events."""
    tally: Counter[str] = Counter()
    for game in range(games):
        play_fives_match(seats, 150, random.Random(seed + game), tally)
    return tally


class Sampler:
    """Keeps a copy of every position self-play reaches, for timing `legal_moves` alone."""

    def __init__(self) -> None:
        self.positions: list[tuple[Hand, int]] = []

    def start(self, state: GameState) -> None:
        """Nothing to do at the start."""

    def before(self, hand: Hand, seat: int, moves: list[Move]) -> None:
        """Keep the position."""
        self.positions.append((hand.clone(), seat))

    def after(self, state: GameState, new: list[ev.Event]) -> None:
        """Nothing to do after a move."""

    def finish(self, state: GameState, log: list[ev.Event]) -> None:
        """Nothing to do at the end."""


def sample_positions(games: int) -> list[tuple[Hand, int]]:
    """Return the positions of `games` random matches, 2 to 8 seats."""
    sampler = Sampler()
    for game in range(games):
        play_random_match(2 + game % 7, {"hands": 10, "opening": "draw"},
                          random.Random(game), Counter(), sampler)
    return sampler.positions


def list_all(positions: list[tuple[Hand, int]]) -> Counter[str]:
    """List the legal moves of every position once."""
    for hand, seat in positions:
        legal_moves(hand, seat)
    return Counter(listings=len(positions))


def baseline(games: int, seed: int) -> Counter[str]:
    """Play `games` random 4-player `dominoes` games; count their moves, passes included."""
    random.seed(seed)  # the package's random player draws from the global generator
    counted: Counter[str] = Counter()
    for _ in range(games):
        game = dominoes.Game.new()
        while game.result is None:
            dominoes.players.random(game)
            game.make_move(*game.valid_moves[0])
        counted["moves"] += len(game.moves)
        counted["passes"] += game.moves.count(None)
    return counted


def measure(rounds: int, scale: float) -> dict[str, Any]:
    """Time everything `rounds` times, interleaved; keep the best time of each measurement."""
    positions = sample_positions(14)
    jobs: dict[str, Callable[[], Counter[str]]] = {
        **{f"seats_{n}": partial(self_play, n, int(6 * scale) or 1, 1000 * n) for n in SEATS},
        **{f"fives_{n}": partial(fives_play, n, int(10 * scale) or 1, 1000 * n)
           for n in FIVES_SEATS},
        "legal": lambda: list_all(positions),
        "baseline": lambda: baseline(int(500 * scale) or 1, 7),
    }
    best: dict[str, tuple[float, Counter[str]]] = {}
    for _ in range(rounds):
        for name, job in jobs.items():
            seconds, counted = timed(job)
            if name not in best or seconds < best[name][0]:
                best[name] = (seconds, counted)
    return report(best)


def report(best: dict[str, tuple[float, Counter[str]]]) -> dict[str, Any]:
    """Print the figures and return the JSON summary."""
    hands_per_s, seconds, tally = {}, 0.0, Counter[str]()
    for n in SEATS:
        took, counted = best[f"seats_{n}"]
        hands_per_s[str(n)] = round(counted[ev.HAND_ENDED] / took, 1)
        seconds, tally = seconds + took, tally + counted
        actions = sum(counted[a] for a in ACTIONS)
        print(f"{n} players: {hands_per_s[str(n)]:,.0f} hands/s, {actions / took:,.0f} actions/s "
              f"({actions / counted[ev.HAND_ENDED]:.1f} actions a hand)")
    actions = sum(tally[a] for a in ACTIONS)
    print(f"actions: {actions / seconds:,.0f}/s ({tally[ev.TILE_PLAYED]:,} plays, "
          f"{tally[ev.TILE_DRAWN]:,} draws, {tally[ev.PASSED]:,} passes in {seconds:.2f} s)")
    fives_hands, fives_actions = fives_report(best)
    took, counted = best["legal"]
    legal_us = took / counted["listings"] * 1e6
    print(f"legal_moves: {legal_us:.2f} us a listing ({counted['listings']:,} positions)")
    took, counted = best["baseline"]
    base = counted["moves"] / took
    passes = counted['passes'] / counted['moves']
    print(f"baseline dominoes {version('dominoes')}: {base:,.0f} moves/s ({passes:.0%} passes)")
    return {
        "hands_per_s": hands_per_s,
        "actions_per_s": round(actions / seconds),
        "legal_moves_us": round(legal_us, 2),
        "baseline_dominoes_moves_per_s": round(base),
        "ratio_actions_vs_baseline": round(actions / seconds / base, 2),
        "allfives_hands_per_s": fives_hands,
        "allfives_actions_per_s": round(fives_actions),
        "ratio_allfives_actions_vs_baseline": round(fives_actions / base, 2),
    }


def fives_report(best: dict[str, tuple[float, Counter[str]]]) -> tuple[dict[str, float], float]:
    """Print All Fives' figures; return its hands a second by seats and its actions a second."""
    hands_per_s, seconds, actions = {}, 0.0, 0
    for n in FIVES_SEATS:
        took, counted = best[f"fives_{n}"]
        hands_per_s[str(n)] = round(counted[ev.HAND_ENDED] / took, 1)
        done = sum(counted[a] for a in ACTIONS)
        seconds, actions = seconds + took, actions + done
        print(f"All Fives {n} players: {hands_per_s[str(n)]:,.0f} hands/s, "
              f"{done / took:,.0f} actions/s ({done / counted[ev.HAND_ENDED]:.1f} a hand)")
    print(f"All Fives actions: {actions / seconds:,.0f}/s")
    return hands_per_s, actions / seconds


def long_sweep(games: int) -> bool:
    """Run the tests' invariant checks over `games` ten-hand matches, then over All Fives'
    10,000 hands; print the verdicts."""
    checker = Checker(random.Random(1))
    seconds, tally = timed(lambda: sweep(games, lambda game: random.Random(game), checker))
    print(f"sweep: {tally[ev.HAND_ENDED]:,} hands, {checker.counts['steps']:,} steps checked "
          f"in {seconds:.0f} s")
    spinner_ok = verdict("sweep", checker.counts, checker.failures)
    return fives_long_sweep(LONG_FIVES_HANDS) and spinner_ok


def fives_long_sweep(hands: int) -> bool:
    """Run the All Fives invariant checks over `hands` hands; print the verdict."""
    checker = FivesChecker(random.Random(1))
    seconds, tally = timed(lambda: fives_sweep(hands, lambda game: random.Random(game), checker))
    by_seats = ", ".join(f"{tally[f'hands_{n}_seats']:,} at {n}" for n in FIVES_SEATS)
    print(f"All Fives sweep: {tally[ev.HAND_ENDED]:,} hands ({by_seats} seats), "
          f"{tally['matches']:,} matches, {checker.counts['steps']:,} steps checked "
          f"in {seconds:.0f} s")
    return verdict("All Fives sweep", checker.counts, checker.failures)


def verdict(name: str, counts: Counter[str], failures: dict[str, list[str]]) -> bool:
    """Print a sweep's counts and what broke; return whether nothing did."""
    print(f"{name} counts:", dict(sorted(counts.items())))
    broken = {kind: found for kind, found in failures.items() if found}
    for kind, found in broken.items():
        print(f"{name} FAILED {kind}: {counts[f'failed_{kind}']} times, e.g. {found[0]}")
    return not broken


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; with --long, the invariant sweep first."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", action="store_true", help="run the 100,000-hand sweep first")
    parser.add_argument("--rounds", type=int, default=30, help="rounds to take the best of")
    parser.add_argument("--scale", type=float, default=1.0, help="work per round, relative")
    args = parser.parse_args(argv)
    ok = long_sweep(LONG_GAMES) if args.long else True
    print(json.dumps(measure(args.rounds, args.scale)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
