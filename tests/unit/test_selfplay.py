"""Self-play proves the invariants over 10,000 seeded random hands (R1-R26).

1,000 ten-hand matches, seats cycling 2-8 under both opening options, are played once
through the real commands with a `Checker` watching every step; each test then reads the
part of the verdict that proves its rule. `python -m bench.engine --long` runs the same
checks over 100,000 hands.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

import pytest

from service.game import events as ev
from service.rules.opening import OPENING_RULES
from tests.support.selfplay import Checker, play_random_match, sweep

GAMES = 1_000
HANDS = 10
SEED = 20_240_501


@dataclass
class Verdict:
    """What the sweep counted and what the checker found."""

    tally: Counter[str]
    checker: Checker


@pytest.fixture(scope="module")
def verdict() -> Verdict:
    """Play the sweep once for the whole module."""
    checker = Checker(random.Random(SEED))
    tally = sweep(GAMES, lambda game: random.Random(SEED + game), checker, hands=HANDS)
    return Verdict(tally, checker)


def test_R4_R9_the_sweep_plays_10000_hands_over_2_to_8_seats_and_both_openings(
        verdict: Verdict) -> None:
    tally = verdict.tally
    assert tally[ev.HAND_ENDED] == GAMES * HANDS >= 10_000
    assert all(tally[f"hands_{seats}_seats"] >= 1_000 for seats in range(2, 9))
    assert all(tally[f"hands_{rule}"] == GAMES * HANDS // 2 for rule in OPENING_RULES)
    assert verdict.checker.counts["steps"] > 500_000


def test_R1_R5_all_66_tiles_are_in_hands_boneyard_or_table_at_every_step(
        verdict: Verdict) -> None:
    assert verdict.checker.failures["tiles"] == []
    assert verdict.checker.counts["hands"] == GAMES * HANDS


def test_the_open_ends_stay_indexed_by_value_at_every_step(verdict: Verdict) -> None:
    assert verdict.checker.failures["index"] == []


def test_R16_every_listed_move_is_accepted(verdict: Verdict) -> None:
    assert verdict.checker.failures["listed"] == []
    assert verdict.checker.counts["listed_checked"] == verdict.checker.counts["steps"]


def test_R16_unlisted_moves_are_rejected_naming_the_rule_they_break(verdict: Verdict) -> None:
    counts = verdict.checker.counts
    assert verdict.checker.failures["unlisted"] == []
    for rule in ("R4", "R10", "R11", "R13", "R14", "R16", "R17"):
        assert counts[f"rejected_{rule}"] > 100, rule


def test_R19_R20_every_hand_ends_by_domino_or_block_and_is_scored_by_R21_R22(
        verdict: Verdict) -> None:
    counts = verdict.checker.counts
    assert verdict.checker.failures["ending"] == []
    assert counts["ended_domino"] + counts["ended_blocked"] == GAMES * HANDS
    assert counts["ended_domino"] > 0 and counts["ended_blocked"] > 0


def test_R9_R18_the_sweep_reaches_boneyard_searches_and_lifted_obligations(
        verdict: Verdict) -> None:
    assert verdict.checker.counts["search_draws"] > 0
    assert verdict.tally[ev.OBLIGATION_LIFTED] > 0


def test_R26_replaying_each_hand_and_each_match_reproduces_the_state(verdict: Verdict) -> None:
    assert verdict.checker.failures["replay"] == []
    assert verdict.checker.counts["matches"] == GAMES


@pytest.mark.parametrize("seats", [2, 5, 8])
def test_R26_sealed_and_unsealed_play_of_one_seed_agree(seats: int) -> None:
    rules = {"hands": HANDS, "opening": "next_lower"}
    sealed_state, sealed_log = play_random_match(seats, rules, random.Random(seats),
                                                 Counter(), sealed=True)
    state, log = play_random_match(seats, rules, random.Random(seats), Counter())
    assert ev.first_broken_link(sealed_log) is None
    assert [{k: e[k] for k in ("type", "seat", "data")} for e in sealed_log] == log
    assert sealed_state.to_dict() == state.to_dict() | {"last_hash": sealed_log[-1]["hash"]}


def test_R26_a_cloned_hand_equals_its_original_and_plays_on_alone() -> None:
    state, _ = play_random_match(3, {"hands": 1, "opening": "draw"}, random.Random(3), Counter())
    hand = state.hand
    assert hand is not None
    before = hand.to_dict()
    clone = hand.clone()
    assert clone.to_dict() == before
    for held in clone.tiles:
        held.clear()
    clone.boneyard.clear()
    clone.ends.clear()
    clone.layout.clear()
    clone.obligations.append("e1")
    assert hand.to_dict() == before
