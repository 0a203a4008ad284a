"""The `expert` level: determinized Monte Carlo search over what the seat can infer.

Each round samples the hidden hands and boneyard consistently with the view (`sampler`),
tries every surviving move in that same deal and plays the hand out with the greedy
policy (`playout`, `shedding`); sequential halving keeps the better half of the moves after
each stage.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterator

from service.rules.moves import Move
from service.rules.tiles import Tile
from workers.ai.playout import apply, finish, outcome
from workers.ai.sampler import Deal, deal_hidden, world
from workers.ai.seat_view import SeatView
from workers.ai.shedding import keep_counts

EXPOSE_CHOICES = 3
"""How many of the ten values a spinner could leave (R14) the search considers."""

POINT_SCALE = 20.0
"""A hand won is worth as much as this many points of margin over the others (R21-R23)."""


def choose(view: SeatView, rng: random.Random, budget_s: float = 0.3,
           playouts: int | None = None) -> Move:
    """Search for `budget_s` seconds, or `playouts` playouts (deterministic); forced: no search."""
    moves = candidates(view)
    if len(moves) == 1:
        return moves[0]
    start = time.perf_counter() if playouts is None else 0.0
    stages = math.ceil(math.log2(len(moves)))
    sums = [0.0] * len(moves)
    alive = list(range(len(moves)))
    for stage in range(stages):
        share = (stage + 1) / stages
        count = None if playouts is None else playouts // (stages * len(alive))
        for _ in _deals(start + budget_s * share, count):
            deal = deal_hidden(view, rng)
            for i in alive:
                sums[i] += _value(view, deal, moves[i])
        alive.sort(key=sums.__getitem__, reverse=True)  # the alive have seen the same deals
        del alive[math.ceil(len(alive) / 2):]
    return moves[alive[0]]


def candidates(view: SeatView) -> list[Move]:
    """Return the moves worth searching: one per distinct outcome, spinner values pruned."""
    groups: dict[tuple[Tile | None, object, bool], dict[int | None, Move]] = {}
    for m in view.legal_moves:  # ends of equal value and obligation status are alike
        key = (m.tile, view.ends.get(m.end or ""), m.end in view.obligations)
        groups.setdefault(key, {}).setdefault(m.expose, m)
    moves: list[Move] = []
    for (tile, _, _), group in groups.items():
        if tile is not None and len(group) > EXPOSE_CHOICES:
            group = {x: group[x] for x in _best_exposes(view, tile)}
        moves += group.values()
    return moves


def _best_exposes(view: SeatView, played: Tile) -> list[int]:
    """The values most worth leaving with a spinner: ones this seat can follow, others lack."""
    follow = keep_counts(list(view.tiles), played)
    plain = [0] * 10
    for tile in view.unseen:
        if not tile.wild_halves:
            plain[tile.lo] += 1
            plain[tile.hi] += tile.hi != tile.lo
    ranked = sorted(range(10), key=lambda x: (-follow[x], plain[x]))
    return ranked[:EXPOSE_CHOICES]


def reward(scores: list[int], winner: int, seat: int) -> float:
    """Score an ended hand for `seat`: winning it, then its margin over the others' mean."""
    others = [p for s, p in enumerate(scores) if s != seat]
    margin = sum(others) / len(others) - scores[seat]
    return (winner == seat) + margin / POINT_SCALE


def _value(view: SeatView, deal: Deal, move: Move) -> float:
    hand = world(view, deal)
    if not apply(hand, view.seat, move):
        finish(hand)
    return reward(*outcome(hand), view.seat)


def _deals(deadline: float, count: int | None) -> Iterator[int]:
    """Yield once per deal: `count` times if given, else until `deadline`; at least once."""
    if count is not None:
        yield from range(max(1, count))
        return
    done = 0
    while done == 0 or time.perf_counter() < deadline:
        yield done
        done += 1
