"""R1-R3: the set, its notation and its values; malformed input is its own error type."""

import random

import pytest

from service.rules.errors import IllegalMove, MalformedMove, RuleError
from service.rules.moves import Move
from service.rules.tiles import TILES, Tile, parse_tiles

from .positions import play_randomly, shuffled, start_from, tiles

DIGITS = "0123456789"


def test_R1_the_set_is_the_double_nine_set_plus_eleven_spinner_tiles():
    double_nine = {f"{a}-{b}" for a in DIGITS for b in DIGITS if a <= b}
    spinners = {f"{a}-S" for a in DIGITS} | {"S-S"}
    assert len(double_nine) == 55 and len(spinners) == 11
    assert sorted(t.text for t in TILES) == sorted(double_nine | spinners)
    assert len(TILES) == 66


def test_R1_a_played_match_never_gains_or_loses_a_tile():
    def all_tiles_present(match):
        hand = match.hand
        held = [t for h in hand.tiles for t in h] + hand.boneyard + [t for t, _, _ in hand.layout]
        assert sorted(t.index for t in held) == [t.index for t in TILES]

    for seed in range(3):
        match = start_from(shuffled(seed), 2 + seed * 3, rules={"hands": 2, "opening": "draw"})
        play_randomly(match, random.Random(seed), each=all_tiles_present)
        assert match.state.status == "finished"


@pytest.mark.parametrize("text", ["0-0", "3-9", "5-S", "S-S", "0-S", "9-9"])
def test_R2_canonical_spelling_parses_and_prints_back(text):
    tile = Tile.parse(text)
    assert str(tile) == text
    assert eval(repr(tile), {"Tile": Tile}) is tile


@pytest.mark.parametrize(("text", "canonical"), [
    ("9-3", "3-9"), ("S-5", "5-S"), ("S-0", "0-S"), ("s-s", "S-S"), ("s-5", "5-S"),
    ("5-s", "5-S"), ("10-2", "2-S"), ("10-10", "S-S"), (" 3-4", "3-4"), ("9 \u2013 3", "3-9"),
    ("3/9", "3-9"), (f"{' ' * 40}4-3", "3-4")])
def test_R2_a_misspelt_tile_is_rejected_naming_its_canonical_form(text, canonical):
    with pytest.raises(MalformedMove) as caught:
        Tile.parse(text)
    assert caught.value.rule == "R2"
    assert caught.value.message.endswith(f"not in canonical form: write {canonical!r}")


@pytest.mark.parametrize("text", ["3", "3-", "3-4-5", "3--4", "11-2", "", "A-1", "\uff13-9",
                                  None, 34])
def test_R2_what_is_not_a_tile_is_rejected_saying_so(text):
    with pytest.raises(MalformedMove) as caught:
        Tile.parse(text)
    assert caught.value.rule == "R2"
    assert "is not a tile" in caught.value.message


def test_R2_a_list_of_tiles_parses_at_once_and_a_misspelt_one_is_named():
    assert parse_tiles(["3-9", "S-S"]) == [Tile.parse("3-9"), Tile.parse("S-S")]
    with pytest.raises(MalformedMove) as caught:
        parse_tiles(["3-9", "9-3"])
    assert caught.value.rule == "R2" and "'3-9'" in str(caught.value)
    with pytest.raises(MalformedMove):
        parse_tiles([["3-9"]])  # unhashable: not a tile either


def test_R2_a_long_text_sent_as_a_tile_is_not_quoted_back():
    with pytest.raises(MalformedMove) as caught:
        Tile.parse("x" * 5000)
    assert "x" * 17 not in caught.value.message and "the text sent is not a tile" in \
        caught.value.message


def test_R2_a_move_naming_a_misspelt_tile_is_malformed_not_illegal():
    with pytest.raises(MalformedMove) as caught:
        Move.from_dict({"action": "play", "tile": "9-3", "end": "e1"})
    assert not isinstance(caught.value, IllegalMove)
    assert str(caught.value).startswith("violates R2: ")


def test_malformed_and_illegal_moves_are_distinct_error_types_with_rule_and_sentence():
    assert issubclass(MalformedMove, RuleError) and issubclass(IllegalMove, RuleError)
    assert not issubclass(MalformedMove, IllegalMove)
    assert not issubclass(IllegalMove, MalformedMove)
    error = IllegalMove("R17", "the next plays must go on the double 5-5")
    assert (error.rule, error.detail) == (
        "R17", "violates R17: the next plays must go on the double 5-5")


@pytest.mark.parametrize("body", [{"action": "jump"}, {}, {"action": None}])
def test_R16_a_move_with_an_unknown_action_is_malformed(body):
    with pytest.raises(MalformedMove) as caught:
        Move.from_dict(body)
    assert caught.value.rule == "R16"


@pytest.mark.parametrize(("text", "value"), [("3-4", 7), ("2-S", 12), ("S-S", 20), ("0-0", 0),
                                             ("9-9", 18), ("0-S", 10)])
def test_R3_a_pip_counts_its_number_and_a_spinner_half_counts_ten(text, value):
    assert Tile.parse(text).value == value


def test_R3_the_whole_set_is_worth_660():
    assert sum(t.value for t in TILES) == 660
    assert sum(t.value for t in tiles("3-4 2-S S-S")) == 7 + 12 + 20
