"""An All Fives export audits as Spinner's does (R26): through the variants' table."""

from __future__ import annotations

import copy
import random
from collections import Counter

import pytest

from service.game import events as ev
from service.game.allfives.state import LEADER_DRAWN
from service.game.audit import audit
from service.game.variants import VARIANTS, variant_of
from tests.support.fives_selfplay import play_fives_match

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def log() -> list[ev.Event]:
    """A sealed three-seat All Fives match to 100."""
    _, events = play_fives_match(3, 100, random.Random(11), Counter(), sealed=True)
    return events


def reseal(events: list[ev.Event]) -> list[ev.Event]:
    """Chain the events' hashes again, as a forger would after changing one."""
    prev = ev.GENESIS
    for event in events:
        event["hash"] = ev.event_hash(prev, event)
        prev = event["hash"]
    return events


def test_the_variants_table_names_both_rule_sets_spinner_by_default():
    assert set(VARIANTS) == {"spinner", "all_fives"}
    assert variant_of({}) is VARIANTS["spinner"]
    assert len(variant_of({"variant": "all_fives"}).tiles) == 28


def test_F16_a_played_out_match_audits_clean(log):
    assert audit(log) is None


def test_F10_a_play_claiming_other_points_is_found(log):
    forged = copy.deepcopy(log)
    play = next(e for e in forged if e["type"] == ev.TILE_PLAYED and e["data"]["points"])
    play["data"]["points"] += 5
    finding = audit(reseal(forged))
    assert finding is not None and finding.seq == play["seq"]


def test_F4_a_leader_draw_with_a_tile_outside_the_set_is_found(log):
    forged = copy.deepcopy(log)
    drawn = next(e for e in forged if e["type"] == LEADER_DRAWN)
    drawn["data"]["tiles"][0] = "7-7"
    finding = audit(reseal(forged))
    assert finding is not None and "tiles" in finding.reason


def test_F3_a_deck_of_the_other_variant_is_found(log):
    forged = copy.deepcopy(log)
    started = next(e for e in forged if e["type"] == ev.HAND_STARTED)
    started["data"]["deck"] = started["data"]["deck"][:-1] + ["7-7"]
    finding = audit(reseal(forged))
    assert finding is not None and "28 tiles" in finding.reason
