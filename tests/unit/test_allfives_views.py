"""F16 and R25: what a seat or a spectator sees of an All Fives game, through the shared views."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from service.game import events as ev
from service.game.views import view, visible_log
from tests.support.fives_selfplay import play_fives_match

from .fives_positions import fives_at

pytestmark = pytest.mark.unit


def test_F16_a_seats_view_has_no_opening_double_no_obligations_and_running_totals():
    match = fives_at("0: 4-6 0-1 | 1: 1-4 2-2 | 2: 0-0")
    match.play(0, "4-6")  # scores 10 at once (F10)
    seen = view(match.state, 1)
    assert seen["opening_double"] is None and seen["obligations"] == []
    assert seen["rules"] == {"variant": "all_fives", "target": 150}
    assert [p["total"] for p in seen["players"]] == [10, 0, 0]
    assert seen["hand"] == ["1-4", "2-2"] and seen["turn"] == 1
    assert seen["legal_moves"] == [{"action": "play", "tile": "1-4", "end": "e1", "expose": 1}]
    assert seen["layout"]["tiles"] == [{"tile": "4-6", "end": None, "expose": None}]
    assert seen["layout"]["ends"] == [{"id": "e1", "value": 4}, {"id": "e2", "value": 6}]


def test_F16_a_spectator_sees_the_table_and_no_tile_in_any_hand():
    match = fives_at("0: 4-6 0-1 | 1: 1-4 2-2")
    seen = view(match.state, None)
    assert "hand" not in seen and "legal_moves" not in seen
    assert [p["tile_count"] for p in seen["players"]] == [2, 2]


def test_F8_a_narrow_side_shows_among_the_ends_only_once_it_may_be_played_on():
    match = fives_at("0: 3-5 6-6 | 1: 5-6 2-5 | layout: 5-5 | lead 1")
    assert [e["id"] for e in view(match.state, 0)["layout"]["ends"]] == ["e1", "e2"]


def test_R25_an_unfinished_all_fives_log_hides_the_deck_others_hands_and_draws():
    _, log = play_fives_match(2, 500, random.Random(4), Counter())
    started = next(e for e in visible_log(log, 0, finished=False)
                   if e["type"] == ev.HAND_STARTED)["data"]
    assert "deck" not in started and started["hands"][1] is None and started["hands"][0]
    drawn = [e for e in visible_log(log, 0, finished=False)
             if e["type"] == ev.TILE_DRAWN and e["seat"] == 1]
    assert drawn and all("tile" not in e["data"] for e in drawn)
