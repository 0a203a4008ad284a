"""The All Fives AI levels: legal, honest (R25: only its seat's view) and sensible (F10)."""

from __future__ import annotations

import random

import pytest

from service.game import events as ev
from service.game.allfives.commands import create_game, make_move
from service.game.allfives.tiles import FIVES_SET
from service.game.allfives.turns import check_move, legal_moves
from tests.support.arena import play_ai_match, seeded
from tests.support.selfplay import AT
from workers.ai.allfives import FIVES_STRATEGIES, choose_fives_move, expert, greedy
from workers.ai.allfives.playout import points_of
from workers.ai.allfives.view import fives_view
from workers.ai.sampler import deal_hidden

from .fives_positions import fives_at

pytestmark = pytest.mark.unit

LEVELS = sorted(FIVES_STRATEGIES)


def decide(level, view, seed):
    """The level's choice with a fixed seed (the expert by a count of deals, not time)."""
    if level == "expert":
        return expert.choose(view, random.Random(seed), playouts=20)
    return choose_fives_move(level, view, random.Random(seed))


def positions(seats: int, seed: int):
    """Yield (state, log, seat) at every turn of a random All Fives match to 100."""
    shuffle = seeded(f"positions:{seed}", FIVES_SET)
    players = [{"name": f"P{s}", "kind": "ai"} for s in range(seats)]
    state, log = create_game(players, {"variant": "all_fives", "target": 100}, shuffle, AT)
    rng = random.Random(seed)
    while state.status == "playing":
        seat = state.turn
        yield state, log, seat
        log += make_move(state, seat, rng.choice(legal_moves(state.hand, seat)), shuffle, AT)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_F11_every_level_makes_only_legal_moves(level, seats):
    checked = 0
    for state, log, seat in positions(seats, seats):
        if checked < 40:
            move = decide(level, fives_view(state, seat, log), checked)
            assert check_move(state.hand, seat, move) == move
            checked += 1
    assert checked == 40


def test_F10_greedy_takes_the_biggest_score_now_then_blocks_what_it_can():
    chosen = 0
    for seed in range(3):
        for state, log, seat in positions(2 + seed, seed):
            view = fives_view(state, seat, log)
            plays = [m for m in view.legal_moves if m.tile is not None]
            if len(plays) < 2 or not view.table.layout:
                continue
            move = greedy.choose(view)
            best = max(points_of(view.table, m) for m in plays)
            assert points_of(view.table, move) == best
            threats = [greedy.threat(view, m) for m in plays if points_of(view.table, m) == best]
            assert greedy.threat(view, move) == min(threats)
            chosen += 1
    assert chosen > 50


def test_F10_greedy_scores_ten_off_a_lone_spinner_rather_than_nothing():
    match = fives_at("0: 6-6 | 1: 5-6 0-5 | layout: 5-5 | lead 0")
    view = fives_view(match.state, 1)
    assert greedy.choose(view).tile.text == "0-5"  # 0 + 5-5 whole = 10; 5-6 leaves 16


def test_F10_greedy_threat_is_the_most_an_unseen_tile_scores_next():
    match = fives_at("0: 6-6 1-1 | 1: 2-3 0-0 | layout: 3-6 | lead 0")
    view = fives_view(match.state, 1)
    (move,) = [m for m in view.legal_moves if m.tile.text == "2-3"]
    # after 2-3 on the 3 the ends show 2 and 6: the most an unseen tile scores next is
    # 10 (2-4 or 2-2 on the 2); 6-6 on the 6 would make 14
    assert greedy.threat(view, move) == 10


def test_R25_the_view_holds_no_tile_the_seat_cannot_see():
    state, log = create_game([{"name": "A", "kind": "ai"}, {"name": "B", "kind": "ai"}],
                             {"variant": "all_fives", "target": 150}, seeded(5, FIVES_SET), AT)
    view = fives_view(state, state.turn, log)
    other = 1 - view.seat
    assert view.table.tiles[other] == [] and view.table.boneyard == []
    assert view.tile_counts[other] == 7 and view.boneyard_count == 14
    assert not set(view.tiles) & set(state.hand.tiles[other])
    assert set(view.unseen) == set(state.hand.tiles[other]) | set(state.hand.boneyard)


def test_F11_a_draw_or_pass_tells_the_sampler_which_tiles_a_seat_lacked():
    match = fives_at("0: 0-1 6-6 | 1: 2-3 | boneyard: 3-4 1-5 | layout: 5-5 | lead 0")
    log = [{"type": ev.HAND_STARTED, "seat": None, "data": {"hand_number": 1, "leader": 0}},
           {"type": ev.TILE_PLAYED, "seat": 0, "data": {"tile": "5-5", "end": None,
                                                         "expose": None,
                                                         "new_ends": ["e1", "e2", "e3", "e4"],
                                                         "points": 10}}]
    log += match.play(1, "draw")  # 2-3 has no 5: seat 1 held no tile with a 5
    log += match.play(1, "draw")
    view = fives_view(match.state, 0, log)
    assert view.draws == (0, 2) and len(view.history) == 2
    for seed in range(30):
        hands, _ = deal_hidden(view, random.Random(seed))
        assert sum(5 in (t.lo, t.hi) for t in hands[1]) <= 1  # one of two draws can hold it


@pytest.mark.parametrize("seed", range(3))
def test_expert_beats_or_ties_greedy_over_a_small_duplicate_sample(seed):
    wins = 0
    for hero in (0, 1):
        players = [_player("greedy")] * 2
        players[hero] = _player("expert")
        state, _ = play_ai_match(players, {"variant": "all_fives", "target": 50},
                                 f"duel:{seed}", random.Random(seed), fives_view)
        wins += state.winners == [hero]
    assert wins >= 1


def _player(level):
    return lambda view, rng: decide(level, view, 0)

