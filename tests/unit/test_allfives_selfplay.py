"""Self-play proves All Fives' invariants (F1-F16) over a sample of seeded random hands.

About 1,200 hands at 2, 3 and 4 seats, targets 150, 50 and 500, are played once through
the real commands with a `FivesChecker` watching every step; each test reads the part of
the verdict that proves its rules. `python -m bench.engine --long` checks 10,000 hands
(beside Spinner's 100,000) the same way.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from service.game import events as ev
from tests.support.fives_selfplay import SEATS, FivesChecker, fives_sweep, play_fives_match

pytestmark = pytest.mark.unit

HANDS = 1_200
SEED = 20_261_202


Verdict = tuple[Counter[str], FivesChecker]
"""What the sweep counted, and the checker with what it found."""


@pytest.fixture(scope="module")
def verdict() -> Verdict:
    """Play the sweep once for the whole module."""
    checker = FivesChecker(random.Random(SEED))
    return fives_sweep(HANDS, lambda game: random.Random(SEED + game), checker), checker


def test_F2_the_sweep_plays_its_hands_at_2_3_and_4_seats(verdict: Verdict) -> None:
    assert verdict[0][ev.HAND_ENDED] >= HANDS
    assert all(verdict[0][f"hands_{seats}_seats"] >= HANDS // 4 for seats in SEATS)
    assert verdict[1].counts["steps"] > 20 * HANDS


def test_F1_F3_the_28_tiles_are_in_hands_boneyard_or_layout_at_every_step(
        verdict: Verdict) -> None:
    assert verdict[1].failures["tiles"] == []
    assert verdict[1].counts["hands"] == verdict[0][ev.HAND_ENDED]


def test_F8_F9_F10_ends_count_and_points_agree_with_the_layout_at_every_step(
        verdict: Verdict) -> None:
    assert verdict[1].failures["layout"] == []
    assert verdict[1].failures["points"] == []


def test_F11_listed_moves_are_accepted_others_refused_naming_their_rule(
        verdict: Verdict) -> None:
    counts = verdict[1].counts
    assert verdict[1].failures["listed"] == []
    for rule in ("F1", "F2", "F6", "F7", "F8", "F11"):
        assert counts[f"rejected_{rule}"] > 10, rule


def test_F12_F13_F14_every_hand_ends_and_is_scored_from_the_hands_left(
        verdict: Verdict) -> None:
    counts = verdict[1].counts
    assert verdict[1].failures["ending"] == []
    assert all(counts[f"ended_{by}"] > 0 for by in ("domino", "blocked", "target"))


def test_F15_each_match_ends_when_and_only_when_one_total_reaches_the_target(
        verdict: Verdict) -> None:
    assert verdict[1].failures["target"] == []
    assert verdict[1].counts["matches"] == verdict[0]["matches"]
    assert verdict[0][ev.GAME_ENDED] == verdict[0]["matches"]


def test_F16_replaying_each_match_reproduces_its_state(verdict: Verdict) -> None:
    assert verdict[1].failures["replay"] == []


@pytest.mark.parametrize("seats", SEATS)
def test_F16_sealed_and_unsealed_play_of_one_seed_agree(seats: int) -> None:
    sealed_state, sealed_log = play_fives_match(seats, 100, random.Random(seats), Counter(),
                                                sealed=True)
    state, log = play_fives_match(seats, 100, random.Random(seats), Counter())
    assert ev.first_broken_link(sealed_log) is None
    assert [{k: e[k] for k in ("type", "seat", "data")} for e in sealed_log] == log
    assert sealed_state.to_dict() == state.to_dict() | {"last_hash": sealed_log[-1]["hash"]}
