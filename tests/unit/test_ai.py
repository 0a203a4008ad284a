"""The AI levels: legal, honest (R25: each sees only its seat's view) and sensible."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterator
from operator import attrgetter

import pytest

from service.game import events as ev
from service.game.commands import create_game, make_move
from service.game.state import GameState
from service.rules.matching import MATCHES
from service.rules.moves import DRAW, Move
from service.rules.tiles import TILES, Tile
from service.rules.turns import check_move
from tests.support.arena import seeded
from tests.support.selfplay import AT
from workers.ai import STRATEGIES, choose_move, expert, greedy
from workers.ai.playout import finish, outcome
from workers.ai.sampler import deal_hidden
from workers.ai.seat_view import SeatView, dealt_none_of, seat_view

from .positions import game_at, start, tiles

LEVELS = sorted(STRATEGIES)
index = attrgetter("index")
PLAYOUTS = 40  # the expert's deterministic stand-in for its time budget
NO_9 = "0-1 0-2 0-3 0-4 0-5 0-6 0-7 0-8 1-3 1-4 1-5 1-6 1-7 1-8"  # no 9, no spinner


def decide(level: str, view: SeatView, seed: int) -> Move:
    """The level's choice from `view` with a fixed seed (the expert by playout count)."""
    rng = random.Random(seed)
    if level == "expert":
        return expert.choose(view, rng, playouts=PLAYOUTS)
    return choose_move(level, view, rng)


def positions(seats: int, seed: int, every: int) -> Iterator[tuple[GameState, list, int]]:
    """Yield (state, log, seat to move) at every `every`-th turn of a greedy 2-hand match."""
    shuffle = seeded(seed)
    players = [{"name": f"P{s}", "kind": "ai"} for s in range(seats)]
    state, log = create_game(players, {"hands": 2, "opening": "draw"}, shuffle, AT)
    turn = 0
    while state.status == "playing":
        seat = state.turn
        assert seat is not None
        view = seat_view(state, seat, log)
        if turn % every == 0 and len(view.legal_moves) > 1:
            yield state, log, seat
        log += make_move(state, seat, greedy.choose(view), shuffle, AT)
        turn += 1


def redeal(state: GameState, log: list, seat: int, rng: random.Random
           ) -> tuple[GameState, list]:
    """Return the game with every tile `seat` cannot see dealt anew, consistently with its view.

    The hidden parts of the log (the deck, others' dealt hands and drawn tiles) are scrambled.
    """
    other = GameState.from_dict(state.to_dict())
    assert other.hand is not None
    other.hand.tiles, other.hand.boneyard = deal_hidden(seat_view(state, seat, log), rng)
    texts = [t.text for t in TILES]
    scrambled = []
    for event in log:
        data = dict(event["data"])
        if event["type"] == ev.HAND_STARTED:
            data["deck"] = rng.sample(texts, len(texts))
            data["hands"] = [h if s == seat else rng.sample(texts, len(h))
                             for s, h in enumerate(data["hands"])]
        elif event["type"] == ev.TILE_DRAWN and event["seat"] != seat:
            data["tile"] = rng.choice(texts)
        scrambled.append(event | {"data": data})
    return other, scrambled


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_each_level_returns_a_legal_move_in_real_positions(level: str, seats: int) -> None:
    count = 0
    for state, log, seat in positions(seats, seed=seats, every=3):
        move = decide(level, seat_view(state, seat, log), seed=count)
        assert state.hand is not None
        assert check_move(state.hand, seat, move) == move  # R16: the engine accepts it as is
        count += 1
    assert count > 10


@pytest.mark.parametrize("level", LEVELS)
def test_R25_no_level_sees_hidden_tiles(level: str) -> None:
    """Re-dealing what a seat cannot see changes neither its view nor its choice."""
    rng = random.Random(5)
    for seats, seed in ((2, 11), (4, 12)):
        for state, log, seat in positions(seats, seed, every=5):
            view = seat_view(state, seat, log)
            for _ in range(2):
                other_state, other_log = redeal(state, log, seat, rng)
                other_view = seat_view(other_state, seat, other_log)
                assert other_view == view
                assert decide(level, other_view, seed=3) == decide(level, view, seed=3)


def test_greedy_sheds_its_highest_tile() -> None:
    match = game_at("0: 2-3 6-7 4-5 | 1: 0-0 | ends: e1=3 e2=7 e3=5 | turn 0")
    move = greedy.choose(seat_view(match.state, 0))
    assert move == Move("play", Tile.parse("6-7"), "e2", 6)


def test_greedy_holds_a_spinner_back_while_another_tile_plays() -> None:
    match = game_at("0: 1-2 8-S | 1: 0-0 | ends: e1=2 | turn 0")
    move = greedy.choose(seat_view(match.state, 0))
    assert move.tile == Tile.parse("1-2")


def test_greedy_leaves_the_value_it_can_follow() -> None:
    match = game_at("0: 3-S 1-7 2-7 | 1: 0-0 | ends: e1=3 | turn 0")
    move = greedy.choose(seat_view(match.state, 0))
    assert (move.tile, move.expose) == (Tile.parse("3-S"), 7)



def test_greedy_breaks_a_tie_in_rank_by_the_value_the_rest_can_follow() -> None:
    match = game_at("0: 3-6 4-5 5-7 | 1: 0-0 | ends: e1=3 e2=4 | turn 0")  # 3-6, 4-5: 9 points
    move = greedy.choose(seat_view(match.state, 0))
    assert move == Move("play", Tile.parse("4-5"), "e2", 5)  # 5-7 can follow a 5, not a 6


def greedy_to_the_end(state: GameState, log: list, shuffle: Callable) -> list:
    """Play the match out through `make_move`, every seat greedy; return the new events."""
    new: list = []
    while state.status == "playing":
        seat = state.turn
        assert seat is not None
        new += make_move(state, seat, greedy.choose(seat_view(state, seat, log + new)),
                         shuffle, AT)
    return new


def assert_playout_ends_it_alike(state: GameState, log: list, shuffle: Callable) -> list:
    """Play the hand out in a playout and through `make_move`: the same tiles, the same end."""
    assert state.hand is not None and state.rules["hands"] == state.hand.number  # the last
    simulated = state.hand.clone()
    finish(simulated)
    new = greedy_to_the_end(state, log, shuffle)
    ended = state.scores[-1]
    assert outcome(simulated) == (ended["points"], ended["winner"])
    assert (simulated.tiles, simulated.layout) == (state.hand.tiles, state.hand.layout)
    return [e["type"] for e in new]


@pytest.mark.parametrize(("text", "types"), [
    ("0: 1-2 | 1: 3-4 | ends: e1=5 e2=6 | owed: e1 | turn 0",  # R18, then R20
     [ev.PASSED, ev.PASSED, ev.OBLIGATION_LIFTED, ev.PASSED, ev.PASSED, ev.HAND_ENDED]),
    ("0: 1-6 | 1: 3-4 | ends: e1=5 e2=6 | owed: e1 | turn 0",  # R18, then R19
     [ev.PASSED, ev.PASSED, ev.OBLIGATION_LIFTED, ev.TILE_PLAYED, ev.HAND_ENDED]),
])
def test_R18_R20_a_playout_lifts_and_blocks_as_the_commands_do(text: str, types: list) -> None:
    match = game_at(text, hands=1)
    new_types = assert_playout_ends_it_alike(match.state, match.events, match.shuffle)
    assert new_types == [*types, ev.GAME_ENDED]


@pytest.mark.parametrize("seats", [2, 4, 7])
def test_R19_a_playout_plays_a_dealt_hand_out_as_greedy_play_through_make_move(
        seats: int) -> None:
    for seed in range(4):
        shuffle = seeded(100 * seats + seed)
        players = [{"name": f"P{s}", "kind": "ai"} for s in range(seats)]
        state, log = create_game(players, {"hands": 1, "opening": "draw"}, shuffle, AT)
        assert state.hand is not None and state.hand.turn is not None
        opener = state.hand.turn  # a playout starts from an opened hand (R10)
        log += make_move(state, opener, greedy.choose(seat_view(state, opener, log)), shuffle, AT)
        assert assert_playout_ends_it_alike(state, log, shuffle)[-2:] == [
            ev.HAND_ENDED, ev.GAME_ENDED]

def drew_and_passed() -> tuple[GameState, list]:
    """Seat 0 opens 9-9; seat 1, holding no 9 and no spinner, draws 1-2 and passes."""
    match = start(["9-9", NO_9], boneyard="1-2")
    match.play(0, "9-9")
    match.play(1, "draw", "pass")
    return match.state, match.events


def test_the_view_records_what_a_draw_and_a_pass_revealed() -> None:
    state, log = drew_and_passed()
    view = seat_view(state, 0, log)
    assert [(v.seat, v.action, v.ends, v.draws) for v in view.history] == [
        (1, "draw", (9,), 0), (1, "pass", (9,), 1)]
    assert view.history[1].tiles == {t for t in TILES if 9 in MATCHES[t.index]}
    assert view.draws == (0, 1)
    assert seat_view(state, 1, log).history == ()  # a seat learns nothing from its own turns


def test_the_sampler_deals_no_seat_a_tile_its_pass_ruled_out() -> None:
    state, log = drew_and_passed()
    view = seat_view(state, 0, log)
    ruled_out = view.history[1].tiles
    for seed in range(100):
        hands, boneyard = deal_hidden(view, random.Random(seed))
        assert not ruled_out & set(hands[1])
        assert sorted(hands[1] + boneyard, key=index) == sorted(view.unseen, key=index)
        assert [len(h) for h in hands] == list(view.tile_counts)


def test_a_draw_since_the_pass_may_explain_one_such_tile() -> None:
    state, log = drew_and_passed()
    view = dataclasses.replace(seat_view(state, 0, log), draws=(0, 2))
    ruled_out = view.history[1].tiles
    held = [len(ruled_out & set(deal_hidden(view, random.Random(s))[0][1])) for s in range(200)]
    assert max(held) == 1


def test_the_opening_reveals_tiles_no_other_seat_was_dealt() -> None:
    d9, d8, d7, d6, ss = (Tile.parse(t) for t in ("9-9", "8-8", "7-7", "6-6", "S-S"))
    assert dealt_none_of(1, 0, d9, 1, "draw", searched=False) == frozenset()
    assert dealt_none_of(1, 0, ss, 1, "draw", searched=False) == {d9}
    assert dealt_none_of(0, 0, ss, 1, "draw", searched=False) == frozenset()
    assert dealt_none_of(1, 0, d9, 1, "draw", searched=True) == {ss}
    assert dealt_none_of(1, 0, d6, 1, "next_lower", searched=False) == {d9, ss, d8, d7}


def test_expert_makes_a_forced_move_without_searching() -> None:
    match = start(["9-9", NO_9], boneyard="1-2")
    match.play(0, "9-9")
    view = seat_view(match.state, 1, match.events)
    rng = random.Random(1)
    before = rng.getstate()
    assert expert.choose(view, rng) == DRAW
    assert rng.getstate() == before  # no deal was sampled


def test_expert_opens_with_the_heavier_of_two_doubles_it_may_open_with() -> None:
    match = start(["9-9 S-S", NO_9])
    view = seat_view(match.state, 0, match.events)
    assert {m.tile.text for m in view.legal_moves} == {"9-9", "S-S"}  # S-S opens as 9-9 (R8)
    assert {decide("expert", view, seed=s).tile.text for s in range(6)} == {"S-S"}  # 20 points


def test_expert_searches_one_move_per_distinct_outcome() -> None:
    match = game_at("0: 3-4 5-S | 1: 0-0 | ends: e1=3 e2=3 e3=5 | owed: | turn 0")
    moves = expert.candidates(seat_view(match.state, 0))
    assert len([m for m in moves if m.tile == Tile.parse("3-4")]) == 1  # e1 and e2 are alike
    assert len([m for m in moves if m.tile == Tile.parse("5-S")]) == (
        1 + expert.EXPOSE_CHOICES)  # on a 3 end it leaves 5; on the 5 end, the best values
    assert tiles("3-4 5-S") == sorted({m.tile for m in moves}, key=index)
