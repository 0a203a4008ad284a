"""R19-R24: how a hand ends, its scores and winner, the match winners and the end of play."""

import pytest

from service.game import events as ev
from service.rules.errors import OutOfTurn
from service.rules.scoring import blocked_winner, match_winners

from .positions import deck, game_at


def ended(match):
    """The data of the `hand_ended` event the last move recorded."""
    (data,) = [e["data"] for e in match.new if e["type"] == ev.HAND_ENDED]
    return data


def test_R19_playing_your_last_tile_ends_the_hand_at_once():
    match = game_at("0: 3-4 | 1: 1-2 5-S | 2: 0-1 | ends: e1=3 | turn 0")
    match.play(0, "3-4 e1")
    assert match.types()[:2] == [ev.TILE_PLAYED, ev.HAND_ENDED]
    assert ended(match)["ended_by"] == "domino"
    assert ended(match)["winner"] == 0


def test_R19_a_last_tile_that_is_a_double_ends_the_hand_without_its_obligations():
    match = game_at("0: 3-3 | 1: 3-5 | ends: e1=3 | turn 0")
    match.play(0, "3-3 e1")
    assert ended(match)["ended_by"] == "domino"
    assert match.state.scores[-1]["winner"] == 0


def test_R19_a_hand_does_not_end_while_the_player_still_holds_tiles():
    match = game_at("0: 3-4 1-1 | 1: 1-2 | ends: e1=3 | turn 0")
    match.play(0, "3-4 e1")
    assert match.types() == [ev.TILE_PLAYED]
    assert match.state.turn == 1


def test_R20_a_full_round_of_passes_with_none_pending_blocks_the_hand():
    match = game_at("0: 1-2 | 1: 3-4 | 2: 0-1 | ends: e1=5 e2=6 | turn 0")
    match.play(0, "pass")
    match.play(1, "pass")
    assert match.types() == [ev.PASSED]
    match.play(2, "pass")
    assert match.types()[:2] == [ev.PASSED, ev.HAND_ENDED]
    assert ended(match)["ended_by"] == "blocked"


def test_R20_after_an_obligation_is_lifted_another_full_round_blocks():
    match = game_at("0: 1-2 | 1: 3-4 | ends: e1=5 e2=6 | owed: e1 | turn 0")
    match.play(0, "pass")
    match.play(1, "pass")
    assert match.types() == [ev.PASSED, ev.OBLIGATION_LIFTED]
    match.play(0, "pass")
    match.play(1, "pass")
    assert ended(match)["ended_by"] == "blocked"


def test_R21_each_player_scores_the_value_of_the_tiles_left_the_domino_player_0():
    match = game_at("0: 3-4 | 1: 1-2 5-S | 2: S-S 0-0 | ends: e1=3 | turn 0")
    match.play(0, "3-4 e1")
    assert ended(match)["points"] == [0, 3 + 15, 20 + 0]
    assert ended(match)["hands"] == [[], ["1-2", "5-S"], ["S-S", "0-0"]]
    assert match.state.totals == [0, 18, 20]


def test_R21_in_a_blocked_hand_everyone_scores_what_they_hold():
    match = game_at("0: 2-9 3-4 | 1: 0-1 | ends: e1=5 | turn 1")
    match.play(1, "pass")
    match.play(0, "pass")
    assert ended(match)["points"] == [11 + 7, 1]


def test_R22_a_blocked_hand_goes_to_the_lowest_score_not_the_lowest_seat():
    match = game_at("0: 4-5 | 1: 0-3 | 2: 1-3 | ends: e1=7 | turn 0")
    match.play(0, "pass")
    match.play(1, "pass")
    match.play(2, "pass")
    assert ended(match)["points"] == [9, 3, 4]
    assert ended(match)["winner"] == 1


def test_R22_a_tie_for_the_lowest_blocked_score_goes_to_the_lowest_seat():
    match = game_at("0: 4-5 | 1: 6-8 | 2: 0-4 | 3: 1-3 | ends: e1=7 | turn 0")
    for seat in range(4):
        match.play(seat, "pass")
    assert ended(match)["points"] == [9, 14, 4, 4]
    assert ended(match)["winner"] == 2
    assert blocked_winner([5, 3, 3, 3]) == 1


def test_R22_R6_the_winner_shuffles_and_starts_the_search_of_the_next_hand():
    hand2 = deck(["1-2", "3-4", "5-6", "0-1"], boneyard="0-2 0-3 0-4 S-S")
    match = game_at("0: 4-5 | 1: 6-8 | 2: 0-4 | 3: 1-3 | ends: e1=7 | turn 0",
                    later=lambda n: hand2)
    for seat in range(4):
        match.play(seat, "pass")
    started = next(e for e in match.new if e["type"] == ev.HAND_STARTED)
    assert (started["data"]["hand_number"], started["data"]["shuffler"]) == (2, 2)
    searchers = [e["seat"] for e in match.new if e["type"] == ev.TILE_DRAWN]
    assert searchers == [2, 3, 0, 1]
    assert match.state.turn == 1


def test_R23_after_the_last_hand_the_lowest_total_wins():
    match = game_at("0: 4-5 | 1: 0-3 | 2: 1-3 | ends: e1=7 | turn 0 | hand 3",
                    hands=3, totals=[30, 40, 25])
    for seat in range(3):
        match.play(seat, "pass")
    game_ended = match.new[-1]
    assert game_ended["type"] == ev.GAME_ENDED
    assert game_ended["data"] == {"totals": [39, 43, 29], "winners": [2]}
    assert match.state.status == "finished"
    assert match.state.winners == [2]


def test_R23_equal_lowest_totals_share_the_win():
    match = game_at("0: 4-5 | 1: 0-4 | 2: 1-3 | ends: e1=7 | turn 0", hands=1)
    for seat in range(3):
        match.play(seat, "pass")
    assert ended(match)["winner"] == 1  # the hand has one winner (R22) ...
    assert match.state.winners == [1, 2]  # ... the match may have several
    assert match_winners([7, 3, 9, 3]) == [1, 3]


def test_R23_the_match_goes_on_until_the_last_hand():
    match = game_at("0: 4-5 | 1: 0-3 | ends: e1=7 | turn 0 | hand 2", hands=3)
    match.play(0, "pass")
    match.play(1, "pass")
    assert match.state.status == "playing"
    assert match.types()[-1] != ev.GAME_ENDED
    assert match.hand.number == 3


def test_R24_a_match_that_has_ended_accepts_no_more_moves():
    match = game_at("0: 4-5 | 1: 0-3 | ends: e1=7 | turn 0", hands=1)
    match.play(0, "pass")
    match.play(1, "pass")
    assert match.state.turn is None
    version = match.state.version
    for seat in (0, 1):
        with pytest.raises(OutOfTurn) as caught:
            match.play(seat, "pass")
        assert caught.value.rule == "R24"
    assert match.state.version == version
