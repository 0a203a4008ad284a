"""R4-R10: seats, the deal, the shuffler, the opening double, the opener and the search."""

import pytest

from service.game import events as ev
from service.rules.errors import IllegalMove, OutOfTurn
from service.rules.opening import opening_double
from service.rules.tiles import TILES, Tile

from .positions import deck, game_at, shuffled, start, start_from, texts

NEXT_LOWER = {"hands": 10, "opening": "next_lower"}


def drawn_by(events):
    """The (seat, tile) of each search draw among `events`."""
    return [(e["seat"], e["data"]["tile"]) for e in events
            if e["type"] == ev.TILE_DRAWN and e["data"]["reason"] == "search"]


def test_R4_turn_order_is_increasing_seat_number_wrapping_to_seat_0():
    match = start(["1-2", "3-4", "9-9 1-9", "2-9"])
    assert match.state.turn == 2
    match.play(2, "9-9")
    assert match.state.turn == 3
    match.play(3, "2-9 e1")
    assert match.state.turn == 0


def test_R4_a_seat_moving_out_of_turn_is_refused():
    match = start(["9-9 1-9", "2-9", "3-9"])
    with pytest.raises(OutOfTurn) as caught:
        match.play(1, "2-9 e1")
    assert caught.value.rule == "R4"
    assert match.state.version == 2


@pytest.mark.parametrize("seats", range(2, 9))
def test_R4_R5_two_to_eight_seats_get_14_tiles_each_with_two_players_else_7(seats):
    match = start_from(shuffled(seats), seats)
    k = 14 if seats == 2 else 7
    started = match.events[1]["data"]
    assert [len(h) for h in started["hands"]] == [k] * seats
    assert len(match.hand.boneyard) + sum(map(len, match.hand.tiles)) == 66


def test_R5_seat_s_is_dealt_deck_s_k_to_s_plus_1_k_and_the_rest_is_the_boneyard():
    deck = shuffled(7)
    match = start_from(deck, 3)
    started = match.events[1]["data"]
    assert started["deck"] == texts(deck)
    assert started["hands"] == [texts(deck[0:7]), texts(deck[7:14]), texts(deck[14:21])]
    searched = len(drawn_by(match.events))
    assert texts(match.hand.boneyard) == texts(deck[21 + searched:])


def test_R5_the_deal_is_the_deck_recorded_in_the_event_not_a_sorted_set():
    deck = shuffled(11)
    assert deck != list(TILES)
    match = start_from(deck, 2)
    assert match.events[1]["data"]["hands"][0] == texts(deck[:14])


def test_R6_seat_0_shuffles_hand_1_and_starts_its_search():
    match = start(["1-2", "3-4", "5-6"], boneyard="0-1 9-9")
    assert match.events[1]["data"]["shuffler"] == 0
    assert drawn_by(match.events) == [(0, "0-1"), (1, "9-9")]


def test_R6_the_winner_of_a_hand_shuffles_the_next_and_its_search_starts_there():
    hand2 = deck(["1-2", "3-4", "5-6"], boneyard="0-1 0-2 8-8")
    match = game_at("0: 4-5 | 1: 0-3 | 2: 1-3 | ends: e1=7 | turn 0", later=lambda n: hand2)
    match.play(0, "pass")
    match.play(1, "pass")
    match.play(2, "pass")  # blocked: seat 1 holds the fewest points (R22)
    ended, started = match.new[1], match.new[2]
    assert ended["data"]["winner"] == 1
    assert started["data"]["shuffler"] == 1
    assert drawn_by(match.new) == [(1, "0-1"), (2, "0-2"), (0, "8-8")]
    assert match.state.turn == 0


def test_R7_hand_h_opens_with_the_double_of_ten_minus_h():
    assert [opening_double(h).text for h in range(1, 11)] == [
        "9-9", "8-8", "7-7", "6-6", "5-5", "4-4", "3-3", "2-2", "1-1", "0-0"]


def test_R7_the_first_hand_opens_with_9_9_and_the_second_with_8_8():
    match = game_at("0: 4-5 | 1: 0-3 | ends: e1=7 | turn 0",
                    later=lambda n: deck(["8-8", "1-2"]))
    match.play(0, "pass")
    match.play(1, "pass")
    assert match.new[-1]["data"]["opening_double"] == "8-8"
    assert match.legal(0) == ["8-8 8"]


def test_R7_a_match_of_one_hand_ends_after_it():
    match = game_at("0: 1-2 | 1: 3-4 | ends: e1=7 | turn 0", hands=1)
    match.play(0, "pass")
    match.play(1, "pass")
    assert match.types()[-2:] == [ev.HAND_ENDED, ev.GAME_ENDED]
    assert match.state.status == "finished"


def test_R8_the_holder_of_d_d_opens_even_if_another_player_holds_S_S():
    match = start(["1-2", "S-S", "9-9"])
    assert match.state.turn == 2
    assert match.legal(2) == ["9-9 9"]
    assert match.legal(1) == []
    assert drawn_by(match.events) == []


def test_R8_the_holder_of_S_S_opens_when_no_hand_holds_d_d():
    match = start(["1-2", "3-4", "S-S"], boneyard="9-9")
    assert match.state.turn == 2
    assert match.legal(2) == ["S-S 9"]
    assert drawn_by(match.events) == []


def test_R8_a_player_holding_both_may_open_with_either():
    for opener in ("9-9", "S-S"):
        match = start(["1-2", "9-9 S-S", "3-4"])
        assert sorted(match.legal(1)) == ["9-9 9", "S-S 9"]
        match.play(1, opener)
        assert match.hand.layout[0][0] is Tile.parse(opener)
        assert list(match.hand.ends.values()) == [9, 9, 9, 9]


def test_R9_the_search_starts_at_the_shuffler_goes_in_turn_order_and_keeps_the_draws():
    match = start(["1-2", "3-4", "5-6"], boneyard="0-1 0-2 0-3 0-4 9-9")
    assert drawn_by(match.events) == [(0, "0-1"), (1, "0-2"), (2, "0-3"), (0, "0-4"), (1, "9-9")]
    assert "0-1" in texts(match.hand.tiles[0]) and "0-4" in texts(match.hand.tiles[0])
    assert [len(h) for h in match.hand.tiles] == [9, 9, 8]
    assert match.state.turn == 1
    assert match.legal(1) == ["9-9 9"]
    match.play(1, "9-9")
    assert match.state.turn == 2  # R10: the seat after the opener, not after the shuffler


def test_R9_drawing_S_S_in_the_search_opens_with_it_standing_for_d_d():
    match = start(["1-2", "3-4", "5-6"], boneyard="0-1 S-S 9-9")
    assert drawn_by(match.events) == [(0, "0-1"), (1, "S-S")]
    match.play(1, "S-S")
    assert list(match.hand.ends.values()) == [9, 9, 9, 9]


def test_R9_with_draw_a_lower_double_held_or_drawn_does_not_open():
    match = start(["7-7", "5-5", "1-2"], boneyard="4-4 9-9")
    assert drawn_by(match.events) == [(0, "4-4"), (1, "9-9")]


def test_R9_next_lower_the_holder_of_the_highest_double_below_d_opens_with_it():
    match = start(["3-3", "5-5", "7-7 1-1"], boneyard="9-9", rules=NEXT_LOWER)
    assert drawn_by(match.events) == []
    assert match.state.turn == 2
    assert match.legal(2) == ["7-7 7"]
    match.play(2, "7-7")
    assert list(match.hand.ends.values()) == [7, 7, 7, 7]


def test_R9_next_lower_still_prefers_d_d_then_S_S_in_hand():
    assert start(["7-7", "9-9", "S-S"], rules=NEXT_LOWER).state.turn == 1
    assert start(["7-7", "1-2", "S-S"], boneyard="9-9", rules=NEXT_LOWER).state.turn == 2


def test_R9_next_lower_with_no_double_in_hand_the_first_qualifying_draw_opens():
    match = start(["1-2", "3-4", "5-6"], boneyard="0-1 4-4 9-9", rules=NEXT_LOWER)
    assert drawn_by(match.events) == [(0, "0-1"), (1, "4-4")]
    match.play(1, "4-4")  # a lower double opens with its own value
    assert list(match.hand.ends.values()) == [4, 4, 4, 4]


def test_R9_next_lower_a_double_at_or_above_d_does_not_open_in_a_later_hand():
    rules = {"hands": 10, "opening": "next_lower"}
    hand2 = deck(["1-2", "3-4"], boneyard="9-9 0-1 6-6 8-8")
    match = game_at("0: 4-5 | 1: 0-3 | ends: e1=7 | turn 0 | rule next_lower",
                    later=lambda n: hand2)
    match.play(0, "pass")
    match.play(1, "pass")  # seat 1 wins the blocked hand and shuffles hand 2 (d = 8)
    assert match.state.rules == {"variant": "spinner", **rules}  # a log naming none
    assert drawn_by(match.new) == [(1, "9-9"), (0, "0-1"), (1, "6-6")]
    assert match.legal(1) == ["6-6 6"]


def test_R10_the_opener_must_first_play_the_opening_double_alone_in_the_centre():
    match = start(["9-9 1-9", "1-2", "3-4"])
    assert match.legal(0) == ["9-9 9"]
    for bad in ("1-9", "9-9 e1", "draw", "pass"):
        with pytest.raises(IllegalMove) as caught:
            match.play(0, bad)
        assert caught.value.rule == "R10"
    assert match.state.version == 2


def test_R10_after_the_opening_double_play_passes_to_the_next_seat():
    match = start(["1-2", "9-9 1-9", "3-4"])
    match.play(1, "9-9")
    assert match.hand.layout == [(Tile.parse("9-9"), None, 9)]
    assert match.state.turn == 2
    assert match.new[0]["data"]["end"] is None


def test_R10_the_opening_play_may_omit_its_expose_and_records_the_doubles_value():
    match = start(["9-9 1-9", "1-2", "3-4"])
    events = match.play(0, "9-9")
    assert events[0]["data"]["expose"] == 9
    assert events[0]["data"]["end"] is None
