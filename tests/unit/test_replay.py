"""R26: replaying the recorded events gives the same state; snapshots; the hash chain."""

import copy
import hashlib
import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.game import events as ev
from service.game.commands import make_move
from service.game.state import GameState, replay
from service.rules.moves import Move

from .positions import AT, legal, play_randomly, shuffled, start, start_from

RULES = {"hands": 3, "opening": "draw"}


@pytest.fixture(scope="module")
def finished():
    """A whole three-hand match between four seats, played at random."""
    match = start_from(shuffled(21), 4, rules=RULES, later=lambda n: shuffled(21 + n))
    play_randomly(match, random.Random(21))
    assert match.state.status == "finished"
    return match


def test_R26_replaying_the_events_yields_the_same_state(finished):
    assert replay(finished.events).to_dict() == finished.state.to_dict()
    assert replay(copy.deepcopy(finished.events)).to_dict() == finished.state.to_dict()


def test_R26_replaying_any_prefix_yields_the_state_at_that_point():
    match = start_from(shuffled(4), 3, rules=RULES)
    rng = random.Random(4)
    while match.state.status == "playing":
        play_randomly(match, rng, limit=1)
        assert replay(match.events).to_dict() == match.state.to_dict()


def test_R26_shuffles_are_recorded_and_replay_deals_from_the_recorded_deck(finished):
    started = [e["data"] for e in finished.events if e["type"] == ev.HAND_STARTED]
    assert [d["deck"] for d in started] == [[t.text for t in shuffled(n)] for n in (21, 23, 24)]
    created, hand_started = copy.deepcopy(finished.events[:2])
    deck = hand_started["data"]["deck"]
    deck[0], deck[-1] = deck[-1], deck[0]
    hand = replay([created, hand_started]).hand
    assert hand.tiles[0][0].text == deck[0]
    assert hand.tiles[0][0].text != started[0]["deck"][0]


def test_R26_different_decks_give_different_games_the_same_deck_the_same_game():
    def final(seed):
        match = start_from(shuffled(seed), 3, rules={"hands": 1, "opening": "draw"})
        play_randomly(match, random.Random(0))
        return match.state.to_dict()

    assert final(1) == final(1)
    assert final(1) != final(2)


def test_R26_a_snapshot_round_trips_through_json(finished):
    data = finished.state.to_dict()
    restored = GameState.from_dict(json.loads(json.dumps(data)))
    assert restored.to_dict() == data


def test_R26_replay_from_a_snapshot_mid_game_reaches_the_same_final_state(finished):
    for cut in (2, len(finished.events) // 2, len(finished.events) - 1):
        snapshot = json.loads(json.dumps(replay(finished.events[:cut]).to_dict()))
        state = replay(finished.events[cut:], GameState.from_dict(snapshot))
        assert state.to_dict() == finished.state.to_dict()


def test_R26_a_snapshot_in_mid_hand_plays_on_like_the_original():
    match = start(["9-9 4-9", "3-4", "1-2"], boneyard="5-6")
    match.play(0, "9-9")
    restored = GameState.from_dict(json.loads(json.dumps(match.state.to_dict())))
    assert restored.hand.to_dict() == match.hand.to_dict()
    assert restored.turn == match.state.turn == 1
    for _ in range(3):  # the next moves, made on both, record the same events and states
        seat = match.state.turn
        text = legal(match.hand, seat)[0]
        again = make_move(restored, seat, Move.parse(text), match.shuffle, AT)
        assert again == match.play(seat, text)
        assert restored.to_dict() == match.state.to_dict()


def test_R26_a_clone_plays_on_alone_and_the_original_stays_at_its_version(finished):
    for cut in (2, len(finished.events) // 3, len(finished.events) - 2):
        original = replay(finished.events[:cut])
        before = original.to_dict()
        clone = replay(finished.events[cut:], original.clone())
        assert clone.to_dict() == finished.state.to_dict()
        assert original.to_dict() == before


def test_hash_chain_each_hash_chains_the_previous_hash_and_the_events_canonical_json(finished):
    prev = "0" * 64
    for seq, event in enumerate(finished.events, start=1):
        assert event["seq"] == seq
        body = {k: v for k, v in event.items() if k != "hash"}
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert event["hash"] == hashlib.sha256((prev + text).encode()).hexdigest()
        prev = event["hash"]
    assert finished.state.last_hash == prev
    assert ev.first_broken_link(finished.events) is None


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12)


@given(JSON_VALUES)
def test_hash_chain_canonical_json_is_sorted_compact_utf8_json(value):
    try:
        stdlib = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        expected = stdlib.encode()
    except UnicodeEncodeError:  # a lone surrogate: not text UTF-8 can carry
        with pytest.raises(TypeError):
            ev.canonical_json(value)
        return
    assert ev.canonical_json(value) == expected


def test_hash_chain_first_broken_link_finds_a_tampered_event(finished):
    events = copy.deepcopy(finished.events)
    target = next(e for e in events if e["type"] == ev.HAND_ENDED)
    target["data"]["points"][0] += 1
    assert ev.first_broken_link(events) == target["seq"]


def test_hash_chain_a_tampered_event_with_a_recomputed_hash_breaks_the_next_link(finished):
    events = copy.deepcopy(finished.events)
    i = next(i for i, e in enumerate(events) if e["type"] == ev.TILE_PLAYED and i > 2)
    events[i]["data"]["expose"] = (events[i]["data"]["expose"] + 1) % 10
    events[i]["hash"] = ev.event_hash(events[i - 1]["hash"], events[i])
    assert ev.first_broken_link(events) == events[i]["seq"] + 1


def test_hash_chain_a_missing_or_reordered_event_breaks_the_chain(finished):
    events = finished.events
    assert ev.first_broken_link(events[:3] + events[4:]) == 4
    assert ev.first_broken_link([events[1], events[0], *events[2:]]) == 1
