"""All Fives through the use cases (issue 22 point 3): snapshots, loading, past versions, turn
clocks and leaving, webhooks and the AI by variant, over the in-memory store."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest

from service.api import schemas
from service.game import events as ev
from service.game.allfives.commands import create_game, make_move
from service.game.allfives.state import FivesState
from service.game.allfives.turns import legal_moves
from service.game.audit import audit
from service.game.lifecycle import leave, time_out
from service.game.state import GameState
from service.game.variants import replay_log, restore
from service.game.views import own, table, view
from service.rules.moves import Move
from service.usecases.games import Games
from service.usecases.notifications import bodies
from tests.memory_store import InMemoryEventStore
from tests.unit.test_schemas import as_dumped
from tests.unit.test_usecases import FakeTurnQueue, first_legal
from workers.ai.by_variant import choose_in_game

from .fives_positions import players, rules, shuffles

START = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
HUMANS = [{"name": "Ann", "kind": "human"}, {"name": "Bob", "kind": "human"}]


def stamp(seconds: float) -> str:
    """The RFC 3339 time `seconds` after START, as the service's clock writes it."""
    moment = START + timedelta(seconds=seconds)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}Z"


def random_move(state: FivesState, rng: random.Random) -> Move:
    """A random legal move of the seat to move."""
    assert state.hand is not None and state.turn is not None
    return rng.choice(legal_moves(state.hand, state.turn))


def test_F16_a_state_rebuilt_from_its_snapshot_is_the_state_at_every_step() -> None:
    """What `recording.append` stores at each deal and `loading.load` rebuilds from it."""
    rng, shuffle = random.Random(3), shuffles(3)
    state, log = create_game(players(3), rules(100), shuffle, stamp(0))
    steps = 0
    while state.status == "playing":
        stored = restore(orjson.loads(orjson.dumps(state.to_dict())))
        assert isinstance(stored, FivesState) and stored.to_dict() == state.to_dict()
        assert [view(stored, s) for s in (0, 1, 2, None)] == \
            [view(state, s) for s in (0, 1, 2, None)]
        clone = state.clone()
        new = make_move(state, state.turn, random_move(state, rng), shuffle, stamp(steps))
        log += new
        assert replay_log(new, stored).to_dict() == replay_log(new, clone).to_dict() == \
            state.to_dict()
        steps += 1
    assert steps > 30 and audit(log) is None
    assert isinstance(replay_log(log), FivesState)
    assert isinstance(replay_log(log[:1]), FivesState)  # a log's variant is its game_created's


def test_F16_every_view_of_an_all_fives_match_is_its_schemas_dump() -> None:
    rng, shuffle = random.Random(4), shuffles(4)
    state, _ = create_game(players(2), rules(50), shuffle, stamp(0))
    shown = 0
    while state.status == "playing":
        for seat in (0, 1, None):
            assert as_dumped(schemas.StateOut(), {"game_id": "g1", **table(state),
                                                  **own(state, seat)})
            shown += 1
        make_move(state, state.turn, random_move(state, rng), shuffle, stamp(0))
    assert shown > 30 and table(state)["scores"]


@pytest.fixture
def games() -> Games:
    """The use cases over an empty in-memory store, with a fixed clock."""
    return Games(InMemoryEventStore(), FakeTurnQueue(), lambda: stamp(0))


def test_F16_a_match_loaded_from_its_snapshots_plays_to_its_end_and_verifies(games) -> None:
    game_id = games.create(HUMANS, rules(50), None).game_id
    moves = 0
    while (shown := games.current_view(game_id, None).table.fields)["status"] == "playing":
        games.ctx.states.take(game_id)  # nothing kept: load from the latest snapshot
        seat = shown["turn"]
        legal = games.current_view(game_id, seat).own["legal_moves"]
        games.move(game_id, seat, random.Random(moves).choice(legal), None, None)
        moves += 1
    export = games.export(game_id)
    assert audit(export) is None and any(e["type"] == "leader_drawn" for e in export)
    assert len(shown["scores"]) == sum(e["type"] == "hand_ended" for e in export)
    for version in (2, 3, len(export) // 2, len(export)):  # /state?version=N (R26)
        past = games.view_at(game_id, 0, version)
        assert past.own == own(replay_log(export[:version]), 0)
    assert moves > 5 and len(shown["winners"]) == 1


def test_a_timed_out_all_fives_seat_is_moved_for_then_leaves_and_the_log_verifies() -> None:
    clocked = {**rules(50), "turn_seconds": 10, "timeouts_to_leave": 2}
    state, log = create_game([*HUMANS, {"name": "Cy", "kind": "human"}], clocked,
                             shuffles(6), stamp(0))
    rng, now, timed_out = random.Random(6), 0.0, 0
    while state.status == "playing":
        now += 11  # past every deadline: each human turn times out
        if state.players[state.turn]["kind"] == "human":
            assert view(state, None)["turn_deadline"] == stamp(now - 1)  # 10 s after 11 s ago
            log += time_out(state, random_move(state, rng), shuffles(6), stamp(now))
            timed_out += 1
        else:
            log += make_move(state, state.turn, random_move(state, rng), shuffles(6),
                             stamp(now))
    kinds = [e["type"] for e in log]
    assert kinds.count(ev.SEAT_LEFT) == 3 and kinds.count(ev.TURN_TIMED_OUT) == timed_out == 6
    assert [p["kind"] for p in state.players] == ["ai"] * 3
    assert audit(log) is None


def test_a_seat_leaves_an_all_fives_match_by_its_own_choice(games) -> None:
    game_id = games.create(HUMANS, rules(50), None).game_id
    shown = games.leave(game_id, 1, "expert")
    assert shown.table.fields["players"][1]["kind"] == "ai"
    assert shown.own["legal_moves"] == []
    state = replay_log(games.ctx.store.read(game_id))
    assert leave(state.clone(), 0, "random", stamp(1))[0]["type"] == ev.SEAT_LEFT


def test_F16_webhooks_of_an_all_fives_hands_end_and_match_end_name_points_not_tiles(
        games) -> None:
    game_id = games.create(HUMANS, rules(50), None).game_id
    state = replay_log(games.ctx.store.read(game_id))
    rng, shuffle = random.Random(2), shuffles(2)
    found: list[dict[str, Any]] = []
    while state.status == "playing":
        new = make_move(state, state.turn, random_move(state, rng), shuffle, stamp(0))
        found += bodies(games.ctx, game_id, state, new)
    ended = [b for b in found if b["type"] == "hand_ended"]
    assert ended and all(len(b["points"]) == 2 for b in ended)
    assert found[-1]["type"] == "game_ended" and len(found[-1]["winners"]) == 1
    assert sum(b["type"] == "turn" for b in found) > 5
    assert not any("hands" in b or "tile" in b for b in found)


@pytest.mark.parametrize("level", ["random", "greedy", "expert"])
def test_the_ai_of_a_games_variant_makes_a_legal_move(level: str) -> None:
    fives, log = create_game(players(2), rules(150), shuffles(9), stamp(0))
    lead = choose_in_game(level, fives, fives.turn, log, random.Random(1), 0.02)
    assert lead in legal_moves(fives.hand, fives.turn)
    make_move(fives, fives.turn, lead, shuffles(9), stamp(0))
    reply = choose_in_game(level, fives, fives.turn, log, random.Random(1), 0.02)
    assert reply in legal_moves(fives.hand, fives.turn)


def test_an_ai_turn_of_an_all_fives_game_lands_through_the_use_cases(games) -> None:
    game_id = games.create([HUMANS[0], {"name": "Bot", "kind": "ai", "level": "greedy"}],
                           rules(50), None).game_id
    state = replay_log(games.ctx.store.read(game_id))
    if state.turn == 0:
        games.move(game_id, 0, first_legal(state, 0, [], 0.0).to_dict(), None, None)
    version = games.ctx.store.version(game_id)
    assert games.ai_turn(game_id, version, lambda s, seat, log, left: choose_in_game(
        "greedy", s, seat, log, random.Random(0), left))
    assert games.ctx.store.read(game_id)[version]["seat"] == 1
    assert not isinstance(replay_log(games.ctx.store.read(game_id)), GameState)
