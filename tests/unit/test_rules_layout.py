"""R11-R15: open ends, the opening double, matching, declaring spinners and branching doubles."""

import random

import pytest

from service.game import events as ev
from service.game.commands import make_move
from service.rules.errors import IllegalMove, MalformedMove
from service.rules.moves import Move
from service.rules.position import parse_position
from service.rules.tiles import Tile

from .positions import (
    AT,
    dealt,
    game_at,
    game_with,
    legal,
    play_randomly,
    refused,
    shuffled,
    start,
    start_from,
)


def test_R11_open_ends_have_string_ids_and_digit_values():
    match = start(["9-9 4-9", "1-2", "3-4"])
    match.play(0, "9-9")
    assert all(isinstance(end, str) for end in match.hand.ends)
    assert set(match.hand.ends.values()) == {9}


def test_R11_a_play_replaces_its_end_and_leaves_the_other_ids_alone():
    match = game_at("0: 5-6 1-1 | 1: 2-3 | ends: e1=6 e2=2 e3=0 | turn 0")
    match.play(0, "5-6 e1")
    assert match.hand.ends == {"e2": 2, "e3": 0, "e4": 5}


def test_R11_end_ids_are_never_reused_within_a_hand():
    match = start_from(shuffled(3), 4, rules={"hands": 3, "opening": "draw"})
    play_randomly(match, random.Random(3))
    hands: list[list[str]] = []
    for e in match.events:
        if e["type"] == ev.HAND_STARTED:
            hands.append([])
        elif e["type"] == ev.TILE_PLAYED:
            hands[-1] += e["data"]["new_ends"]
    assert len(hands) == 3
    for ids in hands:
        assert len(ids) == len(set(ids))


@pytest.mark.parametrize("end", ["e99", "e1", None, "north", 5])
def test_R11_a_play_on_an_end_that_is_not_open_is_illegal_not_malformed(end):
    match = game_at("0: 5-6 1-1 | 1: 2-3 | ends: e2=6 e3=2 | turn 0")  # e1 was covered
    with pytest.raises(IllegalMove) as caught:
        make_move(match.state, 0, Move("play", Tile.parse("5-6"), end), match.shuffle, AT)
    assert caught.value.rule == "R11"
    assert not isinstance(caught.value, MalformedMove)


def test_R12_the_opening_double_has_four_ends_of_its_value():
    match = start(["1-2", "6-6", "3-4"], rules={"hands": 10, "opening": "next_lower"})
    events = match.play(1, "6-6")
    assert len(events[0]["data"]["new_ends"]) == 4
    assert list(match.hand.ends) == events[0]["data"]["new_ends"]
    assert list(match.hand.ends.values()) == [6, 6, 6, 6]


def test_R12_S_S_opening_in_place_of_d_d_has_four_ends_of_value_d():
    match = game_with(dealt(["S-S 1-2", "1-7 3-4", "5-6"], number=3))  # hand 3: d = 7
    assert match.legal(0) == ["S-S 7"]  # S-S stands for 7-7 (R12)
    match.play(0, "S-S")
    assert list(match.hand.ends.values()) == [7, 7, 7, 7]
    assert "1-7 e1 1" in match.legal(1)


def test_R13_the_touching_half_is_covered_and_the_other_half_becomes_the_end():
    match = game_at("0: 5-6 1-1 | 1: 2-3 | ends: e1=6 e2=2 | turn 0")
    events = match.play(0, "5-6 e1")
    assert events[0]["data"]["expose"] == 5
    assert match.hand.ends == {"e2": 2, "e3": 5}


def test_R13_a_tile_with_no_matching_half_is_refused():
    match = game_at("0: 5-6 1-1 | 1: 2-3 | ends: e1=6 e2=2 | turn 0")
    assert refused(match, 0, "5-6 e2").rule == "R13"
    assert refused(match, 0, "1-1 e1").rule == "R13"


def test_R13_a_spinner_half_matches_any_end():
    hand = parse_position("0: 5-6 2-S 1-1 | 1: 3-3 | ends: e1=6 e2=2 | turn 0")
    assert sorted(legal(hand, 0)) == sorted(
        ["5-6 e1 5", "2-S e1 2"] + [f"2-S e2 {x}" for x in range(10)])


def test_R14_3_S_on_a_3_end_gives_ten_moves_leaving_each_value_0_to_9():
    hand = parse_position("0: 3-S 1-1 | 1: 2-2 | ends: e1=3 | turn 0")
    assert legal(hand, 0) == [f"3-S e1 {x}" for x in range(10)]


def test_R14_3_S_on_a_7_end_leaves_3_and_3_5_on_a_3_end_leaves_5():
    assert legal(parse_position("0: 3-S 1-1 | 1: 2-2 | ends: e1=7 | turn 0"), 0) == ["3-S e1 3"]
    assert legal(parse_position("0: 3-5 1-1 | 1: 2-2 | ends: e1=3 | turn 0"), 0) == ["3-5 e1 5"]


def test_R14_5_S_on_a_5_end_may_leave_any_value_whichever_half_touches():
    assert legal(parse_position("0: 5-S 1-1 | 1: 2-2 | ends: e1=5 | turn 0"), 0) == [
        f"5-S e1 {x}" for x in range(10)]


def test_R14_the_declared_value_is_what_the_next_player_must_match():
    match = game_at("0: 3-S 1-1 | 1: 1-6 2-3 | ends: e1=3 | turn 0")
    match.play(0, "3-S e1 6")
    assert match.hand.ends == {"e2": 6}
    assert match.legal(1) == ["1-6 e2 1"]
    assert refused(match, 1, "2-3 e2").rule == "R13"


def test_R14_expose_is_required_only_where_more_than_one_value_could_be_left():
    match = game_at("0: 3-S 3-5 | 1: 2-2 | ends: e1=3 e2=3 | turn 0")
    assert refused(match, 0, "3-S e1").rule == "R14"
    assert refused(match, 0, "3-5 e1 3").rule == "R14"
    events = match.play(0, "3-5 e1")
    assert events[0]["data"]["expose"] == 5


@pytest.mark.parametrize("expose", [10, -1, "5", True, 2.0])
def test_R14_an_expose_outside_0_to_9_is_malformed(expose):
    with pytest.raises(MalformedMove) as caught:
        Move.from_dict({"action": "play", "tile": "3-S", "end": "e1", "expose": expose})
    assert caught.value.rule == "R14"


def test_R15_a_double_on_an_end_leaves_three_new_ends_of_its_value():
    match = game_at("0: 4-4 1-2 | 1: 4-5 | ends: e1=4 e2=6 | turn 0")
    events = match.play(0, "4-4 e1")
    assert events[0]["data"]["new_ends"] == ["e3", "e4", "e5"]
    assert match.hand.ends == {"e2": 6, "e3": 4, "e4": 4, "e5": 4}


def test_R15_S_S_on_a_4_end_leaves_three_4_ends_and_owes_them_like_any_double():
    match = game_at("0: S-S 1-2 | 1: 4-5 2-6 | ends: e1=4 e2=6 | turn 0")
    events = match.play(0, "S-S e1")
    assert events[0]["data"]["expose"] == 4
    assert match.hand.ends == {"e2": 6, "e3": 4, "e4": 4, "e5": 4}
    assert match.hand.obligations == ["e3", "e4", "e5"]
    assert sorted(match.legal(1)) == ["4-5 e3 5", "4-5 e4 5", "4-5 e5 5"]


def test_R15_S_S_stands_for_the_double_of_the_end_so_it_cannot_declare_another_value():
    match = game_at("0: S-S 1-2 | 1: 4-5 | ends: e1=4 | turn 0")
    assert refused(match, 0, "S-S e1 6").rule == "R14"
    assert match.legal(0) == ["S-S e1 4"]


def test_R15_a_double_of_another_value_does_not_match():
    match = game_at("0: 4-4 1-2 | 1: 4-5 | ends: e1=5 e2=2 | turn 0")
    assert refused(match, 0, "4-4 e1").rule == "R13"
