"""R25: hidden information, in the per-seat views and in the redacted log."""

import random

from service.game import events as ev
from service.game.views import redact, view, visible_log

from .positions import game_at, play_randomly, shuffled, start, start_from, texts


def words(value, skip=("opening_double",)):
    """Every string anywhere inside `value`, except under the keys in `skip`.

    `opening_double` names the double the rules fix for the hand (R7), not a holding.
    """
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in skip:
                yield key
                yield from words(item, skip)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from words(item, skip)


def hidden_from(state, seat):
    """The tiles `seat` may not see: other seats' hands and the boneyard."""
    hand = state.hand
    others = [t for s, held in enumerate(hand.tiles) if s != seat for t in held]
    return set(texts(others + hand.boneyard))


def check_views(match):
    state = match.state
    hand = state.hand
    for seat in [*range(state.seats), None]:
        seen = view(state, seat)
        assert hidden_from(state, seat).isdisjoint(words(seen))
        assert [p["tile_count"] for p in seen["players"]] == [len(h) for h in hand.tiles]
        assert seen["boneyard_count"] == len(hand.boneyard)
        if seat is None:
            assert "hand" not in seen and "legal_moves" not in seen
        else:
            assert seen["hand"] == texts(hand.tiles[seat])
            assert bool(seen["legal_moves"]) == (state.turn == seat)


def test_R25_a_seat_sees_its_own_tiles_the_table_and_only_counts_of_the_rest():
    for seed in range(4):
        match = start_from(shuffled(seed), 3 + seed, rules={"hands": 2, "opening": "draw"})
        check_views(match)
        play_randomly(match, random.Random(seed), each=check_views)


def test_R25_the_table_is_visible_to_everyone():
    match = game_at("0: 4-9 1-1 | 1: 1-2 | 2: 3-4 | boneyard: 5-6 | ends: e1=9 | turn 0")
    match.play(0, "4-9 e1")
    for seat in (0, 1, 2, None):
        seen = view(match.state, seat)
        assert [t["tile"] for t in seen["layout"]["tiles"]] == ["9-9", "4-9"]
        assert seen["layout"]["ends"] == [{"id": "e2", "value": 4}]


def test_R25_a_drawn_tile_is_seen_only_by_its_drawer():
    match = game_at("0: 4-9 1-1 | 1: 1-2 | 2: 3-4 | boneyard: 5-6 0-0 | ends: e1=9 | turn 1")
    match.play(1, "draw")
    assert "5-6" in view(match.state, 1)["hand"]
    for seat in (0, 2, None):
        assert "5-6" not in words(view(match.state, seat))
        assert "5-6" not in words(visible_log(match.events, seat, finished=False))


def search_game():
    """A game whose R9 search has seats 0, 1 and 2 draw."""
    match = start(["1-2", "3-4", "5-6"], boneyard="0-1 0-2 0-3 9-9")
    assert [e["seat"] for e in match.events if e["type"] == ev.TILE_DRAWN] == [0, 1, 2, 0]
    return match


def test_R25_redaction_drops_the_deck_other_dealt_hands_and_every_hash():
    match = search_game()
    started = next(e for e in match.events if e["type"] == ev.HAND_STARTED)
    for seat in (0, 1, 2, None):
        data = redact(started, seat)["data"]
        assert "deck" not in data
        dealt = data.get("hands") or []
        assert all(h is None for s, h in enumerate(dealt) if s != seat)
        if seat is not None:
            assert dealt[seat] == started["data"]["hands"][seat]
        assert data["opening_double"] == "9-9" and data["shuffler"] == 0
        assert all("hash" not in e for e in visible_log(match.events, seat, finished=False))


def test_R25_redaction_drops_the_tile_another_seat_drew_but_keeps_your_own():
    match = search_game()
    draws = [e for e in match.events if e["type"] == ev.TILE_DRAWN]
    for seat in (0, 1, 2, None):
        for event in draws:
            data = redact(event, seat)["data"]
            assert data["reason"] == "search"
            assert ("tile" in data) == (event["seat"] == seat)
            if event["seat"] == seat:
                assert data["tile"] == event["data"]["tile"]


def test_R25_a_redacted_log_names_no_tile_hidden_from_its_reader():
    match = start_from(shuffled(5), 4)
    rng = random.Random(5)
    for _ in range(25):
        play_randomly(match, rng, limit=1)
        if match.state.scores:
            break
        for seat in (0, 1, 2, 3, None):
            log = visible_log(match.events, seat, finished=False)
            assert hidden_from(match.state, seat).isdisjoint(words(log))


def test_R25_at_the_end_of_a_hand_all_hands_are_revealed_to_everyone():
    match = game_at("0: 4-9 | 1: 3-4 | 2: 1-2 0-0 | ends: e1=9 | turn 0")
    match.play(0, "4-9 e1")  # domino (R19)
    ended = next(e for e in match.new if e["type"] == ev.HAND_ENDED)
    for seat in (0, 1, 2, None):
        assert redact(ended, seat)["data"]["hands"] == [[], ["3-4"], ["1-2", "0-0"]]


def test_R25_once_the_match_has_ended_the_log_is_complete_for_everyone():
    match = start_from(shuffled(9), 3, rules={"hands": 1, "opening": "draw"})
    play_randomly(match, random.Random(9))
    for seat in (0, 1, 2, None):
        assert visible_log(match.events, seat, finished=True) == match.events


def test_R17_obligations_are_shown_while_a_seat_is_to_move_and_none_once_the_match_is_over():
    match = game_at("0: 4-5 | 1: 1-2 | ends: e1=3 e2=5 e3=5 | owed: e2 e3 | turn 0", hands=1)
    assert [view(match.state, s)["obligations"] for s in (0, 1, None)] == [["e2", "e3"]] * 3
    match.play(0, "4-5 e2")  # its last tile: the hand, and the one-hand match, are over
    assert match.state.status == "finished" and match.state.turn is None
    assert match.hand.obligations == ["e3"]  # still owed in the last hand's layout
    assert [view(match.state, s)["obligations"] for s in (0, 1, None)] == [[]] * 3
