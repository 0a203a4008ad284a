"""F1-F16: the rules of All Fives (ALLFIVES.md), one test or more per rule, all pure."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from service.game import events as ev
from service.game.allfives.commands import create_game, make_move
from service.game.allfives.hand import FivesHand
from service.game.allfives.scoring import (
    TARGETS,
    first_leader,
    hand_points,
    play_points,
    round_to_five,
)
from service.game.allfives.state import LEADER_DRAWN, replay
from service.game.allfives.tiles import FIVES_SET
from service.game.allfives.turns import legal_moves
from service.game.fairness import Shuffled
from service.game.views import own
from service.rules.errors import IllegalMove, OutOfTurn

from .fives_positions import AT, fives_at, parse, players, rules, shuffles, tiles

pytestmark = pytest.mark.unit


def refusal(match, seat: int, move: str) -> str:
    """Return the rule a refused move names."""
    with pytest.raises(IllegalMove) as caught:
        match.play(seat, move)
    return caught.value.rule


def test_F1_the_set_is_the_28_tiles_of_double_six():
    assert len(FIVES_SET) == 28
    assert {t.text for t in FIVES_SET} == {f"{a}-{b}" for a in range(7) for b in range(a, 7)}


@pytest.mark.parametrize("tile", ["7-7", "3-S", "S-S", "0-9"])
def test_F1_a_tile_outside_double_six_is_refused_naming_F1(tile):
    match = fives_at("0: 4-6 | 1: 1-2")
    with pytest.raises(IllegalMove) as caught:
        match.play(0, tile)
    assert caught.value.rule == "F1"


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_F2_two_to_four_seats_move_in_turn_to_the_left(seats):
    state, _ = create_game(players(seats), rules(), shuffles(seats), AT, sealed=False)
    assert state.seats == seats
    match = fives_at(" | ".join(f"{s}: {t}" for s, t in enumerate(["0-1 6-6", "1-2", "1-3", "1-4"]
                                                                   [:seats])))
    match.play(0, "0-1")
    assert match.state.turn == 1
    with pytest.raises(OutOfTurn) as caught:
        match.play(0, "pass")
    assert caught.value.rule == "F2"


@pytest.mark.parametrize(("seats", "each"), [(2, 7), (3, 5), (4, 5)])
def test_F3_each_seat_is_dealt_7_with_two_players_else_5_the_rest_is_the_boneyard(seats, each):
    state, log = create_game(players(seats), rules(), shuffles(7), AT, sealed=False)
    deck = [e for e in log if e["type"] == ev.HAND_STARTED][0]["data"]["deck"]
    assert state.hand is not None
    assert [[t.text for t in held] for held in state.hand.tiles] == [
        deck[s * each:(s + 1) * each] for s in range(seats)]
    assert [t.text for t in state.hand.boneyard] == deck[seats * each:]
    assert sorted(deck) == sorted(t.text for t in FIVES_SET)


def test_F4_the_seat_drawing_the_most_pips_leads_the_higher_half_breaking_ties():
    assert first_leader(tiles("1-2 5-5 4-6")) == 2  # 10 and 10: 6-4 beats 5-5
    assert first_leader(tiles("5-5 0-6 3-4")) == 0
    assert first_leader(tiles("0-0 0-1")) == 1


def test_F4_the_draw_is_a_public_event_before_the_first_hand_led_by_its_winner():
    drawn = tiles("1-2 5-5 4-6")
    rest = [t for t in FIVES_SET if t not in drawn]

    def shuffle(number: int) -> Shuffled:
        return Shuffled(drawn + rest if number == 0 else list(FIVES_SET))

    state, log = create_game(players(3), rules(), shuffle, AT, sealed=False)
    assert [e["type"] for e in log[:3]] == [ev.GAME_CREATED, LEADER_DRAWN, ev.HAND_STARTED]
    assert log[1]["data"] == {"tiles": ["1-2", "5-5", "4-6"]}
    assert log[2]["data"]["leader"] == 2 and state.turn == 2


def test_F5_the_winner_of_a_hand_leads_the_next():
    match = fives_at("0: 1-2 | 1: 0-0 5-6 | layout: 1-1 | lead 1")
    match.play(0, "1-2 e1")
    assert match.data(ev.HAND_ENDED)["winner"] == 0
    assert match.data(ev.HAND_STARTED)["leader"] == 0
    assert match.state.turn == 0


def test_F5_a_blocked_hand_without_a_winner_is_led_again_by_its_leader():
    # seat 1 led 6-6; seats 0 and 1 tie for the fewest pips, so nobody wins the block
    match = fives_at("0: 0-2 | 1: 1-1 | 2: 0-3 | layout: 6-6 | lead 1")
    for seat in (2, 0, 1):
        match.play(seat, "pass")
    ended = match.data(ev.HAND_ENDED)
    assert ended["ended_by"] == "blocked" and ended["winner"] is None
    assert match.data(ev.HAND_STARTED)["leader"] == 1


def test_F6_the_leader_may_play_any_tile_alone_in_the_middle():
    match = fives_at("0: 1-2 3-3 0-6 | 1: 4-4")
    assert match.legal(0) == ["1-2", "3-3", "0-6"]
    assert match.legal(1) == []
    match.play(0, "1-2")
    assert match.hand.layout == [(tiles("1-2")[0], None, None)]


@pytest.mark.parametrize("move", ["1-2 e1", "draw", "pass"])
def test_F6_the_lead_takes_no_end_and_comes_before_any_draw_or_pass(move):
    match = fives_at("0: 1-2 | 1: 4-4 | boneyard: 0-0")
    assert refusal(match, 0, move) == "F6"


def test_F7_a_tile_matches_an_end_showing_one_of_its_halves_the_other_becomes_the_end():
    match = fives_at("0: 2-4 | 1: 4-5 0-1 | layout: 2-4")
    assert match.legal(1) == ["4-5 e2 5"]
    match.play(1, "4-5 e2")
    assert match.hand.ends == {"e1": 2, "e3": 5}


def test_F7_a_tile_matching_no_end_or_leaving_the_wrong_half_is_refused():
    match = fives_at("0: 2-4 | 1: 4-5 0-1 | layout: 2-4")
    assert refusal(match, 1, "0-1 e1") == "F7"
    assert refusal(match, 1, "4-5 e2 4") == "F7"


def test_F8_the_first_double_is_the_spinner_its_narrow_sides_open_after_both_long_ends():
    match = fives_at("0: 3-5 6-6 | 1: 5-6 2-5 | layout: 5-5 | lead 1")
    assert match.hand.ends == {"e1": 5, "e2": 5}  # e3, e4: the narrow sides, not yet open
    assert refusal(match, 0, "3-5 e3") == "F8"
    match.play(0, "3-5 e1")
    match.play(1, "5-6 e2")
    assert match.hand.ends == {"e5": 3, "e6": 6, "e3": 5, "e4": 5}
    match.play(0, "6-6 e6")  # a later double: an ordinary tile, one end going on
    assert match.data(ev.TILE_PLAYED)["new_ends"] == ["e7"]


def test_F8_new_ends_name_a_leads_halves_in_order_and_a_spinners_long_ends_then_sides():
    match = fives_at("0: 4-6 0-0 | 1: 4-4 1-2")
    match.play(0, "4-6")
    assert match.data(ev.TILE_PLAYED)["new_ends"] == ["e1", "e2"]
    assert match.hand.ends == {"e1": 4, "e2": 6}
    match.play(1, "4-4 e1")  # the spinner on an end: straight on, then the two sides
    assert match.data(ev.TILE_PLAYED)["new_ends"] == ["e3", "e4", "e5"]
    assert match.hand.ends == {"e2": 6, "e3": 4}
    match = fives_at("0: 3-3 | 1: 1-2")
    match.play(0, "3-3")
    assert match.data(ev.TILE_PLAYED)["new_ends"] == ["e1", "e2", "e3", "e4"]


@pytest.mark.parametrize(("layout", "count"), [
    ("4-6", 10),                  # the lead 6-4 counts 10
    ("5-5", 10),                  # a lone spinner shows itself once
    ("5-5, 3-5 e1", 13),          # 3 + the other long end showing 5-5 whole
    ("4-6, 4-4 e1", 14),          # 6 + the spinner across the 4 end
    ("4-6, 4-4 e1, 2-4 e3", 8),   # the spinner covered: its sides open, showing nothing
    ("5-5, 3-5 e1, 5-6 e2, 1-5 e3", 10),  # 3 + 6 + 1 on a narrow side, the other empty
    ("5-5, 3-5 e1, 3-3 e5", 16),  # a later double across its end shows both halves
])
def test_F9_the_count_adds_up_what_the_open_ends_show(layout, count):
    hand, _ = parse(f"0: | 1: | layout: {layout}")
    assert hand.count == count == sum(hand.shows.values())
    assert isinstance(hand, FivesHand)
    assert hand.clone().count == FivesHand.from_dict(hand.to_dict()).count == count  # kept


def test_F10_a_play_leaving_a_multiple_of_five_scores_the_count_at_once():
    match = fives_at("0: 4-6 0-1 | 1: 4-4 1-2 | 2: 0-0")
    match.play(0, "4-6")
    assert match.data(ev.TILE_PLAYED)["points"] == 10
    assert match.state.totals == [10, 0, 0]
    match.play(1, "4-4 e1")  # 6 + 8 = 14: nothing
    assert match.data(ev.TILE_PLAYED)["points"] == 0
    assert match.state.totals == [10, 0, 0]


def test_F10_only_positive_multiples_of_five_score():
    assert [play_points(c) for c in (0, 5, 13, 20, 25)] == [0, 5, 0, 20, 25]


def test_F11_a_seat_with_no_play_draws_until_it_holds_one_then_must_play_it():
    match = fives_at("0: 1-1 3-4 | 1: 0-2 | boneyard: 0-3 3-5 6-6 | layout: 5-5")
    assert match.legal(1) == ["draw"]
    assert refusal(match, 1, "pass") == "F11"
    match.play(1, "draw")
    assert match.state.turn == 1 and match.legal(1) == ["draw"]
    match.play(1, "draw")
    assert match.state.turn == 1
    assert match.legal(1) == ["3-5 e1 3", "3-5 e2 3"]
    assert refusal(match, 1, "draw") == "F11"
    assert refusal(match, 1, "pass") == "F11"


def test_F11_pass_only_with_no_play_and_an_empty_boneyard():
    match = fives_at("0: 1-5 3-4 | 1: 0-2 | layout: 5-5")
    assert match.legal(1) == ["pass"]
    assert refusal(match, 1, "draw") == "F11"
    match.play(1, "pass")
    assert match.state.turn == 0
    assert refusal(match, 0, "pass") == "F11"


def test_F12_going_out_scores_the_others_pips_rounded():
    match = fives_at("0: 1-2 | 1: 5-6 | 2: 0-6 1-1 | layout: 1-1 | lead 2")
    match.play(0, "1-2 e1")
    ended = match.data(ev.HAND_ENDED)
    assert (ended["ended_by"], ended["winner"]) == ("domino", 0)
    assert ended["points"] == [20, 0, 0]  # 11 + 8 = 19 rounds to 20
    assert match.state.totals == [20, 0, 0]


def test_F13_a_block_scores_the_fewest_pips_holder_the_others_rounded():
    assert hand_points([tiles("0-1"), tiles("5-6"), tiles("2-3 0-0")]) == (0, [15, 0, 0])


def test_F13_a_block_with_tied_fewest_scores_nobody():
    assert hand_points([tiles("0-2"), tiles("5-6"), tiles("1-1")]) == (None, [0, 0, 0])


def test_F13_every_seat_passing_in_succession_with_the_boneyard_empty_blocks():
    match = fives_at("0: 0-1 | 1: 1-2 | layout: 6-6")
    match.play(1, "pass")
    assert ev.HAND_ENDED not in match.types()
    match.play(0, "pass")
    ended = match.data(ev.HAND_ENDED)
    assert (ended["ended_by"], ended["winner"], ended["points"]) == ("blocked", 0, [5, 0])


@pytest.mark.parametrize(("pips", "rounded"), [(0, 0), (1, 0), (2, 0), (3, 5), (4, 5),
                                                (12, 10), (13, 15), (25, 25), (27, 25)])
def test_F14_rounding_1_and_2_down_3_and_4_up(pips, rounded):
    assert round_to_five(pips) == rounded


def test_F15_R24_the_target_ends_the_match_mid_hand_and_no_move_is_taken_after():
    match = fives_at("0: 4-6 0-1 | 1: 1-2 | target 50 | totals: 40 45")
    match.play(0, "4-6")
    assert match.types() == [ev.TILE_PLAYED, ev.HAND_ENDED, ev.GAME_ENDED]
    ended = match.data(ev.HAND_ENDED)
    assert (ended["ended_by"], ended["winner"], ended["points"]) == ("target", 0, [0, 0])
    assert match.data(ev.GAME_ENDED) == {"totals": [50, 45], "winners": [0]}
    with pytest.raises(OutOfTurn) as caught:
        match.play(1, "1-2 e1")
    assert caught.value.rule == "R24"  # which holds for both variants (ALLFIVES.md)


def test_F15_a_last_tile_reaching_the_target_ends_by_target_without_domino_points():
    match = fives_at("0: 4-6 | 1: 5-6 | target 50 | totals: 45 0")
    match.play(0, "4-6")
    assert match.data(ev.HAND_ENDED)["ended_by"] == "target"
    assert match.state.totals == [55, 0]


def test_F15_a_hands_end_points_reaching_the_target_end_the_match():
    match = fives_at("0: 1-2 | 1: 5-6 6-6 | layout: 1-1 | lead 1 | target 50 | totals: 30 0")
    match.play(0, "1-2 e1")
    assert match.types() == [ev.TILE_PLAYED, ev.HAND_ENDED, ev.GAME_ENDED]
    assert match.state.totals == [55, 0] and match.state.winners == [0]


def test_F15_targets_are_multiples_of_5_from_50_to_500():
    assert list(TARGETS)[:2] == [50, 55] and TARGETS[-1] == 500 and 150 in TARGETS
    assert 52 not in TARGETS and 505 not in TARGETS


def test_F16_every_play_records_its_points_and_each_hand_end_names_how_and_who():
    match = fives_at("0: 0-1 2-2 | 1: 0-3 | layout: 0-0")
    match.play(1, "0-3 e1")
    assert match.data(ev.TILE_PLAYED)["points"] == 0
    ended = [e for e in play_out(match) if e["type"] == ev.HAND_ENDED]
    assert ended and set(ended[0]["data"]) >= {"ended_by", "winner", "points"}


def play_out(match):
    """Play the first legal move for whoever is to move until this hand ends."""
    log = []
    number = match.hand.number
    while match.state.status == "playing" and match.hand.number == number:
        seat = match.state.turn
        log += match.play(seat, match.legal(seat)[0])
    return log


def test_F16_a_hand_started_carries_api_mds_fields_with_no_opening_double_nor_shuffler():
    """API.md's `hand_started` fields, as F16 says events are: `opening_double` and
    `shuffler` null (none in All Fives), beside the hand's `leader`."""
    _, log = create_game(players(3), rules(), shuffles(7), AT, sealed=False)
    data = next(e for e in log if e["type"] == ev.HAND_STARTED)["data"]
    assert {"hand_number", "opening_double", "shuffler", "deck", "hands"} <= set(data)
    assert data["opening_double"] is None and data["shuffler"] is None
    assert data["leader"] in range(3)


def test_F16_replaying_a_matchs_log_gives_its_state_and_totals_add_up():
    state, log = create_game(players(3), rules(100), shuffles(3), AT, sealed=False)
    match = fives_at("0: 0-1")  # only for its helpers
    match.state, match.shuffle = state, shuffles(3)
    while state.status == "playing":
        log += match.play(state.turn, match.legal(state.turn)[0])
    assert replay(log).to_dict() == state.to_dict()
    played = Counter()
    for e in log:
        if e["type"] == ev.TILE_PLAYED:
            played[e["seat"]] += e["data"]["points"]
        if e["type"] == ev.HAND_ENDED:
            played.update(dict(enumerate(e["data"]["points"])))
    assert [played[s] for s in range(3)] == state.totals
    assert log[-1]["type"] == ev.GAME_ENDED and log[-2]["type"] == ev.HAND_ENDED
    assert max(state.totals) >= 100 and state.winners == [state.totals.index(max(state.totals))]


def test_F12_F13_F15_no_move_is_offered_where_the_servers_own_event_comes_next() -> None:
    """A state at the version of a play or pass that ends the hand (F12 domino, F13 block) or
    the match (F15 target), whose append goes on with `hand_ended`, names a seat to move
    but offers it no move: the hand is over. Every other seat's move had its mover offered
    moves. Walks every version of seeded matches, as a replay does."""
    ends: Counter[str] = Counter()
    offered = 0
    for seed in range(12):
        rng, shuffle = random.Random(seed), shuffles(seed)
        state, log = create_game(players(2 + seed % 3), rules(50), shuffle, AT)
        while state.status == "playing":
            assert state.hand is not None and state.turn is not None
            move = rng.choice(legal_moves(state.hand, state.turn))
            log += make_move(state, state.turn, move, shuffle, AT)
        for version in range(1, len(log)):
            then, following = replay(log[:version]), log[version]
            moves = {s: own(then, s)["legal_moves"] for s in range(then.seats)}
            if following["type"] == ev.HAND_ENDED:
                ends[following["data"]["ended_by"]] += 1
                assert moves == {s: [] for s in moves}, (seed, version)
            elif following["seat"] is not None and following["type"] != LEADER_DRAWN:
                assert moves[following["seat"]], (seed, version)
                offered += 1
    assert {"domino", "target"} <= set(ends) and offered > 100
    assert set(ends) == {"domino", "blocked", "target"}  # each way a hand ends, F12 F13 F15
