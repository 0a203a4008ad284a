"""Text forms: a move as `Move.parse` reads and `str` writes it, a hand as a one-line position."""

import random

import pytest

from service.game.commands import create_game, make_move
from service.rules.errors import MalformedMove
from service.rules.hand import Hand
from service.rules.moves import DRAW, PASS, Move
from service.rules.position import parse_position, position_text
from service.rules.tiles import Tile
from service.rules.turns import legal_moves

from .positions import AT, players, shuffles

EXAMPLE = "0: 3-S 5-6 | 1: 2-2 | boneyard: 1-1 4-S | ends: e1=3 e2=7 | owed: e1 | turn 0"


def self_played(seed: int) -> list[Hand]:
    """Return a copy of the hand before every move of a random match of 2-8 seats."""
    shuffle = shuffles(seed * 10)
    rng = random.Random(seed)
    rules = {"hands": 3, "opening": ("draw", "next_lower")[seed % 2]}
    state, _ = create_game(players(2 + seed % 7), rules, shuffle, AT)
    hands = []
    while state.status == "playing":
        seat = state.turn
        assert seat is not None and state.hand is not None
        hands.append(state.hand.clone())
        make_move(state, seat, rng.choice(legal_moves(state.hand, seat)), shuffle, AT)
    return hands


HANDS = [hand for seed in range(14) for hand in self_played(seed)]


def snapshot(hand: Hand) -> tuple:
    """Everything a hand holds, the order of its open ends too."""
    return hand.to_dict(), list(hand.ends.items()), hand.ends_by_value


@pytest.mark.parametrize(("text", "move"), [
    ("draw", DRAW), ("pass", PASS),
    ("9-9", Move("play", Tile.parse("9-9"))),
    ("S-S 7", Move("play", Tile.parse("S-S"), None, 7)),
    ("3-5 e1", Move("play", Tile.parse("3-5"), "e1")),
    ("3-S e12 7", Move("play", Tile.parse("3-S"), "e12", 7)),
])
def test_R16_a_move_is_read_from_its_text_form_and_written_back(text, move):
    assert Move.parse(text) == move
    assert str(move) == text
    assert repr(move) == f"Move.parse({text!r})"


def test_R16_every_legal_move_of_self_played_hands_reads_back_from_its_text():
    count = 0
    for hand in HANDS:
        for move in legal_moves(hand, hand.turn):
            assert Move.parse(str(move)) == move
            assert eval(repr(move), {"Move": Move}) == move
            count += 1
    assert count > 10_000


def test_R14_the_text_form_writes_the_expose_whenever_it_is_known():
    plays = [m for hand in HANDS for m in legal_moves(hand, hand.turn) if m.action == "play"]
    assert all(str(m).endswith(f" {m.expose}") for m in plays)
    assert {m.end is None for m in plays} == {True, False}  # openings and plays on ends


def test_a_move_no_hand_can_list_has_a_repr_that_still_pastes_back():
    odd = Move("play", Tile.parse("3-5"), "north", None)
    assert eval(repr(odd), {"Move": Move, "Tile": Tile}) == odd


@pytest.mark.parametrize(("text", "rule"), [
    ("", "R16"), ("jump", "R16"), ("draw 1", "R16"), (" 3-5 e1", "R16"), ("3-5  e1", "R16"),
    ("3-5 e1 7 7", "R16"), (None, "R16"),
    ("5-3 e1", "R2"), ("3-s e1", "R2"), ("10-2", "R2"),
    ("3-5 x1", "R11"), ("3-5 E1 5", "R11"),
    ("3-S e1 x", "R14"), ("S-S 10", "R14"), ("3-S e1 -1", "R14"),
])
def test_R2_R11_R14_R16_malformed_move_text_is_refused_naming_the_rule(text, rule):
    with pytest.raises(MalformedMove) as caught:
        Move.parse(text)
    assert caught.value.rule == rule


def test_a_position_reads_as_written():
    hand = parse_position(EXAMPLE)
    assert [[t.text for t in held] for held in hand.tiles] == [["3-S", "5-6"], ["2-2"]]
    assert [t.text for t in hand.boneyard] == ["1-1", "4-S"]
    assert (hand.ends, hand.obligations, hand.turn) == ({"e1": 3, "e2": 7}, ["e1"], 0)
    assert hand.layout == [(Tile.parse("9-9"), None, 9)]  # hand 1 opened (R7, R10)
    assert hand.new_end_ids(Tile.parse("3-5"), "e1") == ["e3"]
    assert position_text(hand) == EXAMPLE


def test_a_position_with_every_part_reads_back():
    text = ("0: 1-2 3-6 3-4 | 1: | 2: 4-4 | ends: e5=3 e9=7 | drawn: 3-4 | "
            "layout: 7-7 7, 1-7 e2 1, 1-1 e5 1 | turn 0 | hand 3 | rule next_lower | "
            "shuffler 2 | passes 1 | next_end 12")
    hand = parse_position(text)
    assert (hand.number, hand.rule, hand.shuffler, hand.passes, hand.next_end) == (
        3, "next_lower", 2, 1, 12)
    assert hand.drawn is Tile.parse("3-4") and hand.tiles[1] == []
    assert position_text(hand) == text


def test_every_self_played_position_reads_back_from_its_text():
    for hand in HANDS:
        assert snapshot(parse_position(position_text(hand))) == snapshot(hand)
    assert {bool(h.drawn) for h in HANDS} == {bool(h.obligations) for h in HANDS} == {
        True, False}


@pytest.mark.parametrize("text", [
    "0: 1-2 | 1: 1-2 | turn 0",  # a tile twice
    "0: 1-2 | 1: 3-4 | bones: 5-5",  # no such part
    "0: 1-2 | 1: 3-4 | turn 0 | turn 1",  # a part twice
    "0: 1-2 | 1: 3-4 | layout: 9-9 9, 3-9 e1",  # a play that does not say what it left
])
def test_what_is_not_a_position_is_refused(text):
    with pytest.raises(ValueError, match="position|layout"):
        parse_position(text)
