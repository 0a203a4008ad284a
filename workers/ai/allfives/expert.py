"""The All Fives `expert` level: flat Monte Carlo over sampled hidden hands.

Each round deals the tiles the seat cannot see consistently with its view (the counts,
and what others' draws and passes revealed: `workers.ai.sampler`), tries every legal move
in that same deal and plays the hand out with the quick greedy policy (`playout`). A move
is worth its margin of points over the others' mean, and a total reaching the target
(F15) weighs as much as `TARGET_WEIGHT` points.
"""

from __future__ import annotations

import random
import time

from service.rules.moves import Move
from workers.ai.allfives.playout import apply, finish
from workers.ai.allfives.view import FivesView
from workers.ai.sampler import Deal, deal_hidden

TARGET_WEIGHT = 100.0
"""Reaching the target first (the match won, F15) counts as this many points of margin."""


def choose(view: FivesView, rng: random.Random, budget_s: float = 0.3,
           playouts: int | None = None) -> Move:
    """Search for `budget_s` seconds, or `playouts` deals (deterministic); forced: no search."""
    moves = view.legal_moves
    if len(moves) == 1:
        return moves[0]
    sums = [0.0] * len(moves)
    deadline = time.perf_counter() + budget_s
    done = 0
    while done == 0 or (done < playouts if playouts is not None
                        else time.perf_counter() < deadline):
        deal = deal_hidden(view, rng)
        for i, move in enumerate(moves):
            sums[i] += value(view, deal, move)
        done += 1
    return moves[max(range(len(moves)), key=sums.__getitem__)]


def value(view: FivesView, deal: Deal, move: Move) -> float:
    """Return the margin `move` leads to in one deal, played out to the hand's end."""
    hand = view.table.clone()
    hand.tiles, hand.boneyard = [list(held) for held in deal[0]], list(deal[1])
    gained, totals = [0] * view.seats, list(view.totals)
    if not apply(hand, view.seat, move, gained, totals, view.target):
        finish(hand, gained, totals, view.target)
    seat = view.seat
    margin = gained[seat] - (sum(gained) - gained[seat]) / (view.seats - 1)
    reached = [s for s in range(view.seats) if totals[s] + gained[s] >= view.target]
    if reached:
        margin += TARGET_WEIGHT if seat in reached else -TARGET_WEIGHT
    return margin
