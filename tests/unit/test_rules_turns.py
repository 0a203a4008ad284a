"""R16-R18: what a turn may be, obligations on doubles and lifting them."""

import contextlib
import random

import pytest

from service.game import events as ev
from service.rules.errors import RuleError
from service.rules.moves import DRAW, PASS, Move
from service.rules.position import parse_position
from service.rules.turns import check_move, legal_moves

from .positions import game_at, legal, play_randomly, refused, shuffled, start, start_from


def ends_of(moves):
    """The end ids that the plays among `moves` go on."""
    return {m.split()[1] for m in moves if " " in m}


def test_R16_no_draw_or_pass_while_a_play_exists():
    match = game_at("0: 3-5 1-1 | 1: 2-2 | boneyard: 4-4 | ends: e1=3 e2=8 | turn 0")
    assert match.legal(0) == ["3-5 e1 5"]
    assert refused(match, 0, "draw").rule == "R16"
    assert refused(match, 0, "pass").rule == "R16"


def test_R16_with_no_play_and_tiles_in_the_boneyard_the_only_move_is_to_draw():
    match = game_at("0: 1-2 | 1: 4-4 | boneyard: 5-6 3-4 | ends: e1=3 e2=7 | turn 0")
    assert match.legal(0) == ["draw"]
    assert refused(match, 0, "pass").rule == "R16"


def test_R16_a_draw_takes_the_first_boneyard_tile_and_the_turn_stays():
    match = game_at("0: 1-2 | 1: 4-4 | boneyard: 5-6 3-4 | ends: e1=3 e2=7 | turn 0")
    events = match.play(0, "draw")
    assert [(e["type"], e["data"]) for e in events] == [
        (ev.TILE_DRAWN, {"tile": "5-6", "reason": "draw"})]
    assert match.state.turn == 0
    assert [t.text for t in match.hand.boneyard] == ["3-4"]


def test_R16_after_an_unplayable_draw_the_only_move_is_to_pass():
    match = game_at("0: 1-2 | 1: 4-4 | boneyard: 5-6 3-4 | ends: e1=3 e2=7 | turn 0")
    match.play(0, "draw")
    assert match.legal(0) == ["pass"]
    assert refused(match, 0, "draw").rule == "R16"
    match.play(0, "pass")
    assert match.state.turn == 1


def test_R16_after_a_playable_draw_only_plays_of_that_tile():
    match = game_at("0: 1-2 | 1: 4-4 | boneyard: 3-4 5-6 | ends: e1=3 e2=7 | turn 0")
    match.play(0, "draw")
    assert match.legal(0) == ["3-4 e1 4"]
    assert refused(match, 0, "pass").rule == "R16"
    assert refused(match, 0, "draw").rule == "R16"
    match.play(0, "3-4 e1")
    assert match.state.turn == 1


def test_R16_after_a_playable_draw_another_held_tile_may_not_be_played():
    hand = parse_position("0: 1-2 3-6 | drawn: 3-4 | 1: 4-4 | ends: e1=3 e2=7 | turn 0")
    assert legal(hand, 0) == ["3-4 e1 4"]
    match = game_at("0: 1-2 3-6 | drawn: 3-4 | 1: 4-4 | ends: e1=3 e2=7 | turn 0")
    assert refused(match, 0, "3-6 e1").rule == "R16"


def test_R16_with_no_play_and_an_empty_boneyard_the_only_move_is_to_pass():
    match = game_at("0: 1-2 | 1: 4-4 | ends: e1=3 e2=7 | turn 0")
    assert match.legal(0) == ["pass"]
    assert refused(match, 0, "draw").rule == "R16"


def test_R16_a_tile_you_do_not_hold_cannot_be_played():
    match = game_at("0: 1-2 | 1: 3-4 | ends: e1=3 | turn 0")
    assert refused(match, 0, "3-4 e1").rule == "R16"


def test_R16_a_seat_that_is_not_to_move_has_no_legal_moves():
    match = game_at("0: 1-2 | 1: 3-4 | ends: e1=3 | turn 0")
    assert match.legal(1) == []


@pytest.mark.parametrize("seed", range(6))
def test_R16_legal_moves_are_exactly_the_moves_the_rules_accept(seed):
    match = start_from(shuffled(seed), 2 + seed, rules={"hands": 1, "opening": "draw"})
    rng = random.Random(seed)
    while match.state.status == "playing":
        hand, seat = match.hand, match.state.turn
        candidates = [DRAW, PASS] + [
            Move("play", t, end, x) for t in hand.tiles[seat]
            for end in [None, *hand.ends] for x in [None, *range(10)]]
        accepted = set()
        for candidate in candidates:
            with contextlib.suppress(RuleError):
                accepted.add(check_move(hand, seat, candidate))
        assert accepted == set(legal_moves(hand, seat))
        assert all(not legal_moves(hand, s) for s in range(hand.seats) if s != seat)
        play_randomly(match, rng, limit=1)


def test_R17_east_and_west_of_the_opener_come_before_north_and_south():
    match = start(["9-9 0-1", "4-9", "6-9", "7-9"])
    east, west, north, south = match.play(0, "9-9")[0]["data"]["new_ends"]
    assert match.hand.obligations == [east, west]
    assert ends_of(match.legal(1)) == {east, west}
    assert refused(match, 1, f"4-9 {north}").rule == "R17"
    match.play(1, f"4-9 {east}")
    assert match.hand.obligations == [west]
    assert ends_of(match.legal(2)) == {west}
    match.play(2, f"6-9 {west}")
    assert match.hand.obligations == []
    assert {north, south} <= ends_of(match.legal(3))


def test_R17_next_three_plays_go_on_a_new_double():
    match = game_at("0: 4-4 1-2 | 1: 4-5 2-3 | 2: 4-6 2-7 | 3: 4-7 2-8 | ends: e1=4 e2=2 | turn 0")
    match.play(0, "4-4 e1")
    assert match.hand.obligations == ["e3", "e4", "e5"]
    assert sorted(match.legal(1)) == ["4-5 e3 5", "4-5 e4 5", "4-5 e5 5"]
    assert refused(match, 1, "2-3 e2").rule == "R17"
    match.play(1, "4-5 e4")
    match.play(2, "4-6 e3")
    assert match.hand.obligations == ["e5"]
    assert refused(match, 3, "2-8 e2").rule == "R17"
    match.play(3, "4-7 e5")
    assert match.hand.obligations == []
    assert "1-2 e2 1" in match.legal(0)


def test_R17_a_double_played_onto_an_obligated_end_stacks_its_own_obligations():
    match = start(["9-9 0-1", "S-S 1-2", "2-9", "3-9"])
    east, west, _, _ = match.play(0, "9-9")[0]["data"]["new_ends"]
    new = match.play(1, f"S-S {east}")[0]["data"]["new_ends"]
    assert len(new) == 3
    assert match.hand.obligations == [west, *new]
    assert {match.hand.ends[end] for end in new} == {9}
    assert ends_of(match.legal(2)) == {west, *new}


def test_R17_obligations_of_two_doubles_are_all_pending_and_any_of_them_may_be_covered():
    hand = parse_position(
        "0: 4-5 2-5 | 1: 1-1 | ends: e1=5 e2=5 e3=4 e4=4 e5=2 | owed: e1 e3 | turn 0")
    assert sorted(legal(hand, 0)) == sorted(["4-5 e1 4", "4-5 e3 5", "2-5 e1 2"])


def test_R18_a_full_round_of_passes_with_an_empty_boneyard_lifts_the_obligation():
    match = game_at("0: 2-3 | 1: 2-4 | 2: 1-2 | ends: e1=5 e2=2 | owed: e1 | turn 0")
    match.play(0, "pass")
    match.play(1, "pass")
    assert match.hand.obligations == ["e1"]
    events = match.play(2, "pass")
    assert [(e["type"], e["data"]) for e in events] == [
        (ev.PASSED, {}), (ev.OBLIGATION_LIFTED, {"ends": ["e1"]})]
    assert match.hand.obligations == []
    assert match.state.turn == 0
    assert match.legal(0) == ["2-3 e2 3"]


def test_R18_passes_made_while_the_boneyard_still_has_tiles_do_not_count():
    match = game_at("0: 2-3 | 1: 2-4 | boneyard: 1-1 0-0 | ends: e1=5 e2=2 | owed: e1 | turn 0")
    match.play(0, "draw", "pass")  # boneyard still holds 0-0: not an empty-boneyard pass
    match.play(1, "draw", "pass")  # the boneyard is now empty: first counted pass
    assert match.hand.obligations == ["e1"]
    assert match.types() == [ev.PASSED]
    match.play(0, "pass")
    assert match.types() == [ev.PASSED, ev.OBLIGATION_LIFTED]


def test_R18_a_play_breaks_the_round_of_passes():
    match = game_at("0: 2-3 | 1: 5-6 2-4 | 2: 1-2 | ends: e1=5 e2=5 e3=2 | owed: e1 e2 | turn 0")
    match.play(0, "pass")
    match.play(1, "5-6 e1")
    match.play(2, "pass")
    match.play(0, "pass")  # three passes since the start, but not in succession
    assert match.hand.obligations == ["e2"]
    match.play(1, "pass")
    assert match.types() == [ev.PASSED, ev.OBLIGATION_LIFTED]
    assert match.new[1]["data"] == {"ends": ["e2"]}
